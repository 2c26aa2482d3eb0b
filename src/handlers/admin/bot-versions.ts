import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botVersionOperations } from '../../contract/admin/bot-versions.ts';
import type { Handlers } from '../operation.ts';

export const botVersionHandlers = {
  listBotVersions: async (d, actor, { id }) => ({ versions: await d.botVersions.list(actor, id) }),
  getBotVersion: (d, actor, { id, versionId }) => d.botVersions.get(actor, id, versionId),
  getBotPackage: (d, actor, { id, versionId }) => d.botVersions.definition(actor, id, versionId),
  createBotVersion: async (d, actor, { id, ...body }) => ({
    version: await d.botVersions.create(actor, id, body),
  }),
  deployBotVersion: async (d, actor, { id, versionId }) => {
    await d.bots.deployVersion(actor, id, versionId);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof botVersionOperations>;
