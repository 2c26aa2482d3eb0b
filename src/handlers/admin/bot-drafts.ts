import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botDraftOperations } from '../../contract/admin/bot-drafts.ts';
import type { Handlers } from '../operation.ts';

export const botDraftHandlers = {
  getBotDraft: async (d, actor, { id }) => ({ draft: await d.botDrafts.get(actor, id) }),
  validateBotDraft: async (d, actor, { id, files }) => ({
    problems: await d.botDrafts.validate(actor, id, files),
  }),
  saveBotDraft: (d, actor, { id, ...body }) => d.botDrafts.save(actor, id, body),
  discardBotDraft: async (d, actor, { id }) => {
    await d.botDrafts.discard(actor, id);
    return {};
  },
  deployBotDraft: (d, actor, { id, note }) => d.botDrafts.deploy(actor, id, note),
  startBotDraftTest: (d, actor, { id, files }) => d.draftTests.start(actor, id, files),
  listBotDraftTestTurns: async (d, actor, { id, messageId }) => ({
    turns: await d.draftTests.turns(actor, id, messageId),
  }),
} satisfies Handlers<WorkspaceActor, typeof botDraftOperations>;
