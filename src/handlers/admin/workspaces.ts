import type { Domain } from '../../domain/index.ts';
import { notFound } from '../../domain/shared/errors.ts';
import type { AccountActor, WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { workspaceOperations } from '../../contract/admin/workspaces.ts';
import type { Handlers } from '../operation.ts';

/** An operation on the workspace its path names acts in it; a workspace the account is not in is not found. */
async function actingIn(d: Domain, actor: AccountActor, workspaceId: string): Promise<WorkspaceActor> {
  const role = await d.members.roleOf(actor.accountId, workspaceId);
  if (!role) throw notFound('Workspace', workspaceId);
  return { accountId: actor.accountId, workspaceId, role };
}

export const workspaceHandlers = {
  createWorkspace: (d, actor, { name }) => d.workspaces.create(actor.accountId, name),
  listWorkspaces: (d, actor, query) => d.workspaces.list(actor.accountId, query),
  checkHandleAvailability: (d, _actor, { handle }) => d.workspaces.handleAvailability(handle),
  getWorkspace: (d, actor, { id }) => d.workspaces.get(actor.accountId, id),
  updateWorkspace: async (d, actor, { id, ...changes }) =>
    d.workspaces.update(await actingIn(d, actor, id), id, changes),
  deleteWorkspace: async (d, actor, { id }) => {
    await d.workspaces.delete(await actingIn(d, actor, id), id);
    return {};
  },
} satisfies Handlers<AccountActor, typeof workspaceOperations>;
