import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { handoffOperations } from '../../contract/admin/handoffs.ts';
import type { Handlers } from '../operation.ts';

export const handoffHandlers = {
  listWorkspaceHandoffs: (d, actor, query) => d.handoffs.list(actor, undefined, query),
  listHandoffs: (d, actor, { id, ...query }) => d.handoffs.list(actor, id, query),
  getHandoff: (d, actor, { id, handoffId }) => d.handoffs.get(actor, id, handoffId),
  assignHandoff: async (d, actor, { id, handoffId, ...body }) => ({
    handoff: await d.handoffs.assign(actor, id, handoffId, body),
  }),
  createHandoffMessage: async (d, actor, { id, handoffId, ...body }) => ({
    message: await d.handoffs.sendMessage(actor, id, handoffId, body),
  }),
  resolveHandoff: async (d, actor, { id, handoffId }) => ({
    handoff: await d.handoffs.resolve(actor, id, handoffId),
  }),
} satisfies Handlers<WorkspaceActor, typeof handoffOperations>;
