import type { AccountActor, WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { hubPluginOperations, pluginOperations } from '../../contract/admin/plugins.ts';
import type { Handlers } from '../operation.ts';

export const pluginHandlers = {
  createPlugin: async (d, actor, body) => ({ plugin: await d.plugins.create(actor, body) }),
  listPlugins: (d, actor, query) => d.plugins.list(actor, query),
  getPlugin: async (d, actor, { id }) => ({ plugin: await d.plugins.get(actor, id) }),
  getPluginByName: async (d, actor, { name, version }) => ({
    plugin: await d.plugins.getByName(actor, name, version),
  }),
  getPluginCode: async (d, actor, { id, platform }) => ({
    code: await d.plugins.code(d.plugins.store.get(actor, id), platform),
  }),
  updatePlugin: async (d, actor, { id, ...body }) => ({ plugin: await d.plugins.update(actor, id, body) }),
  deletePlugin: async (d, actor, { id }) => {
    await d.plugins.delete(actor, id);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof pluginOperations>;

export const hubPluginHandlers = {
  listPublicPlugins: (d, _actor, query) => d.plugins.listPublic(query),
  getPublicPluginById: async (d, _actor, { id }) => ({ plugin: await d.plugins.getPublic(id) }),
  getPublicPlugin: async (d, _actor, { name, version }) => ({
    plugin: await d.plugins.getPublicByName(name, version),
  }),
  getPublicPluginCode: async (d, _actor, { id, platform }) => ({
    code: await d.plugins.code(d.plugins.store.published(id), platform),
  }),
} satisfies Handlers<AccountActor, typeof hubPluginOperations>;
