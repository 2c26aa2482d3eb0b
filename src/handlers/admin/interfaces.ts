import type { AccountActor, WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { hubInterfaceOperations, interfaceOperations } from '../../contract/admin/interfaces.ts';
import type { Handlers } from '../operation.ts';

export const interfaceHandlers = {
  createInterface: async (d, actor, body) => ({ interface: await d.interfaces.create(actor, body) }),
  listInterfaces: (d, actor, query) => d.interfaces.list(actor, query),
  getInterface: async (d, actor, { id }) => ({ interface: await d.interfaces.get(actor, id) }),
  getInterfaceByName: async (d, actor, { name, version }) => ({
    interface: await d.interfaces.getByName(actor, name, version),
  }),
  updateInterface: async (d, actor, { id, ...body }) => ({
    interface: await d.interfaces.update(actor, id, body),
  }),
  deleteInterface: async (d, actor, { id }) => {
    await d.interfaces.delete(actor, id);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof interfaceOperations>;

export const hubInterfaceHandlers = {
  listPublicInterfaces: (d, _actor, query) => d.interfaces.listPublic(query),
  getPublicInterfaceById: async (d, _actor, { id }) => ({ interface: await d.interfaces.getPublic(id) }),
  getPublicInterface: async (d, _actor, { name, version }) => ({
    interface: await d.interfaces.getPublicByName(name, version),
  }),
} satisfies Handlers<AccountActor, typeof hubInterfaceOperations>;
