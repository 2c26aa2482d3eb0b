import type { BotActor } from '../../domain/workspace/actors.ts';
import type { workflowOperations } from '../../contract/runtime/workflows.ts';
import type { Handlers } from '../operation.ts';

export const workflowHandlers = {
  createWorkflow: async (d, actor, body) => ({ workflow: await d.workflows.create(actor, body) }),
  getWorkflow: async (d, actor, { id }) => ({ workflow: await d.workflows.get(actor, id) }),
  updateWorkflow: async (d, actor, { id, ...body }) => ({
    workflow: await d.workflows.update(actor, id, body),
  }),
  deleteWorkflow: async (d, actor, { id }) => {
    await d.workflows.delete(actor, id);
    return {};
  },
  listWorkflows: (d, actor, query) => d.workflows.list(actor, query),
  getOrCreateWorkflow: async (d, actor, body) => {
    const { workflow, created } = await d.workflows.getOrCreate(actor, body);
    return { workflow, meta: { created } };
  },
} satisfies Handlers<BotActor, typeof workflowOperations>;
