import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { memberOperations } from '../../contract/admin/members.ts';
import type { Handlers } from '../operation.ts';

export const memberHandlers = {
  listWorkspaceMembers: (d, actor, query) => d.members.list(actor, query),
  getWorkspaceMember: (d, actor) => d.members.me(actor),
  createWorkspaceMember: (d, actor, { email, role }) => d.members.create(actor, email, role),
  updateWorkspaceMember: (d, actor, { id, role }) => d.members.update(actor, id, role),
  deleteWorkspaceMember: async (d, actor, { id }) => {
    await d.members.delete(actor, id);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof memberOperations>;
