import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botOperations } from '../../contract/admin/bots.ts';
import type { Handlers } from '../operation.ts';

export const botHandlers = {
  listBots: (d, actor, query) => d.bots.list(actor, query),
  getBot: async (d, actor, { id }) => ({ bot: await d.bots.get(actor, id) }),
  createBot: async (d, actor, body) => ({ bot: await d.bots.create(actor, body) }),
  updateBot: async (d, actor, { id, ...body }) => ({ bot: await d.bots.update(actor, id, body) }),
  deleteBot: async (d, actor, { id }) => {
    await d.bots.delete(actor, id);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof botOperations>;
