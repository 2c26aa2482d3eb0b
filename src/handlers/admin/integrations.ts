import type { AccountActor, WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { integrationOperations, hubOperations } from '../../contract/admin/integrations.ts';
import { ApiError } from '../../domain/shared/errors.ts';
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

/** Why the hub answers nothing: what a user who looked for an integration there should do instead. */
const notInHub = (what: string) =>
  new ApiError(
    'ResourceNotFound',
    `Integration "${what}" is not in the hub: Parley has no hub of public integrations. Deploy the integration to your workspace with \`bp deploy\` in its project`,
  );

export const hubHandlers = {
  listPublicIntegrations: async () => ({ items: [] }),
  getPublicIntegrationById: async (_d, _actor, { id }) => {
    throw notInHub(id);
  },
  getPublicIntegration: async (_d, _actor, { name, version }) => {
    throw notInHub(`${name}@${version}`);
  },
} satisfies Handlers<AccountActor, typeof hubOperations>;
