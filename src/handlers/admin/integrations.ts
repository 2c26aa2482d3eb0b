import type { AccountActor, WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { integrationOperations, hubOperations } from '../../contract/admin/integrations.ts';
import type { Handlers } from '../operation.ts';

export const integrationHandlers = {
  createIntegration: async (d, actor, body) => ({ integration: await d.integrations.create(actor, body) }),
  listIntegrations: (d, actor, query) => d.integrations.list(actor, query),
  getIntegration: async (d, actor, { id }) => ({ integration: await d.integrations.get(actor, id) }),
  getIntegrationByName: async (d, actor, { name, version }) => ({
    integration: await d.integrations.getByName(actor, name, version),
  }),
  updateIntegration: async (d, actor, { id, ...body }) => ({
    integration: await d.integrations.update(actor, id, body),
  }),
  deleteIntegration: async (d, actor, { id }) => {
    await d.integrations.delete(actor, id);
    return {};
  },
  rotateIntegrationSigningSecrets: async (d, actor, { id }) => ({
    newSigningSecret: await d.integrations.rotateSigningSecret(actor, id),
  }),
} satisfies Handlers<WorkspaceActor, typeof integrationOperations>;

export const hubHandlers = {
  listPublicIntegrations: (d, _actor, query) => d.integrations.listPublic(query),
  getPublicIntegrationById: async (d, _actor, { id }) => ({
    integration: await d.integrations.getPublic(id),
  }),
  getPublicIntegration: async (d, _actor, { name, version }) => ({
    integration: await d.integrations.getPublicByName(name, version),
  }),
} satisfies Handlers<AccountActor, typeof hubOperations>;
