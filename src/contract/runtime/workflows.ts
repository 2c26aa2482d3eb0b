import { Type } from 'typebox';
import { TagMap } from '../../domain/shared/schemas.ts';
import {
  CreateWorkflowBodySchema,
  GetOrCreateWorkflowBodySchema,
  UpdateWorkflowBodySchema,
  WORKFLOW_STATUSES,
  WorkflowSchema,
} from '../../domain/runtime/workflows.ts';
import { listOperation, operation } from './define.ts';
import { CreatedMeta, EmptySchema, IdParam } from '../schemas.ts';

const tag = 'Workflows';
const WorkflowAnswer = Type.Object({ workflow: WorkflowSchema });

export const workflowOperations = [
  operation({
    id: 'createWorkflow',
    method: 'POST',
    path: '/workflows',
    access: 'write',
    tag,
    summary: 'Create a workflow',
    status: 201,
    body: CreateWorkflowBodySchema.properties,
    response: WorkflowAnswer,
    handler: async (d, actor, body) => ({ workflow: await d.workflows.create(actor, body) }),
  }),
  operation({
    id: 'getWorkflow',
    method: 'GET',
    path: '/workflows/:id',
    access: 'read',
    tag,
    summary: 'Get a workflow',
    params: IdParam,
    response: WorkflowAnswer,
    handler: async (d, actor, { id }) => ({ workflow: await d.workflows.get(actor, id) }),
  }),
  operation({
    id: 'updateWorkflow',
    method: 'PUT',
    path: '/workflows/:id',
    access: 'write',
    tag,
    summary: 'Update a workflow',
    description:
      'A finished workflow (completed, cancelled, failed, timed out) keeps its status; finishing sets completedAt.',
    params: IdParam,
    body: UpdateWorkflowBodySchema.properties,
    response: WorkflowAnswer,
    handler: async (d, actor, { id, ...body }) => ({ workflow: await d.workflows.update(actor, id, body) }),
  }),
  operation({
    id: 'deleteWorkflow',
    method: 'DELETE',
    path: '/workflows/:id',
    access: 'write',
    tag,
    summary: 'Delete a workflow',
    params: IdParam,
    response: EmptySchema,
    handler: async (d, actor, { id }) => {
      await d.workflows.delete(actor, id);
      return {};
    },
  }),
  listOperation({
    id: 'listWorkflows',
    path: '/workflows',
    tag,
    summary: 'List workflows',
    query: {
      tags: Type.Optional(TagMap),
      conversationId: Type.Optional(Type.String()),
      userId: Type.Optional(Type.String()),
      parentWorkflowId: Type.Optional(Type.String()),
      statuses: Type.Optional(Type.Array(Type.Enum(WORKFLOW_STATUSES))),
      name: Type.Optional(Type.String()),
    },
    key: 'workflows',
    item: WorkflowSchema,
    handler: (d, actor, query) => d.workflows.list(actor, query),
  }),
  operation({
    id: 'getOrCreateWorkflow',
    method: 'POST',
    path: '/workflows/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a workflow',
    body: GetOrCreateWorkflowBodySchema.properties,
    response: Type.Object({ workflow: WorkflowSchema, meta: CreatedMeta }),
    handler: async (d, actor, body) => {
      const { workflow, created } = await d.workflows.getOrCreate(actor, body);
      return { workflow, meta: { created } };
    },
  }),
];
