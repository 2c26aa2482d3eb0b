import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botKeyOperations } from '../../contract/admin/bot-keys.ts';
import type { Handlers } from '../operation.ts';

export const botKeyHandlers = {
  listBotApiKeys: async (d, actor, { botId }) => ({ baks: await d.botKeys.list(actor, botId) }),
  createBotApiKey: (d, actor, { botId, note }) => d.botKeys.create(actor, botId, note ?? ''),
  deleteBotApiKey: async (d, actor, { id }) => {
    await d.botKeys.delete(actor, id);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof botKeyOperations>;
