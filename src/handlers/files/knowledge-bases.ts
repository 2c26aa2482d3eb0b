import type { BotActor } from '../../domain/workspace/actors.ts';
import type { knowledgeBaseOperations } from '../../contract/files/knowledge-bases.ts';
import type { Handlers } from '../operation.ts';

export const knowledgeBaseHandlers = {
  createKnowledgeBase: async (d, actor, body) => ({
    knowledgeBase: await d.knowledgeBases.create(actor, body),
  }),
  updateKnowledgeBase: async (d, actor, { id, ...body }) => ({
    knowledgeBase: await d.knowledgeBases.update(actor, id, body),
  }),
  deleteKnowledgeBase: async (d, actor, { id }) => {
    await d.knowledgeBases.delete(actor, id);
    return {};
  },
  listKnowledgeBases: (d, actor, query) => d.knowledgeBases.list(actor, query),
} satisfies Handlers<BotActor, typeof knowledgeBaseOperations>;
