import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botOperations } from '../../contract/admin/bots.ts';
import type { Handlers } from '../operation.ts';
import { HEADERS } from '../../contract/headers.ts';
import { integrationsKeyedBy } from '../../domain/integrations/installations.ts';

export const botHandlers = {
  listBots: (d, actor, query) => d.bots.list(actor, query),
  getBot: async (d, actor, { id, [HEADERS.multipleIntegrations]: multiple }) => ({
    bot: await d.bots.get(actor, id, integrationsKeyedBy(multiple)),
  }),
  createBot: async (d, actor, body) => ({ bot: await d.bots.create(actor, body) }),
  updateBot: async (d, actor, { id, [HEADERS.multipleIntegrations]: multiple, ...body }) => ({
    bot: await d.bots.update(actor, id, body, integrationsKeyedBy(multiple)),
  }),
  deleteBot: async (d, actor, { id }) => {
    await d.bots.delete(actor, id);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof botOperations>;
