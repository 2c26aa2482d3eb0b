import { Type } from 'typebox';
import { TagMap } from '../../domain/shared/schemas.ts';
import { CreatedMeta, EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  CreateWorkflowBodySchema,
  GetOrCreateWorkflowBodySchema,
  UpdateWorkflowBodySchema,
} from '../../domain/runtime/schemas.ts';
import { listOperation, operation } from '../operation.ts';
import { WORKFLOW_STATUSES } from '../../value-sets.ts';

const tag = 'Workflows';
const WorkflowAnswer = Type.Object({ workflow: Model.Workflow });

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
    item: Model.Workflow,
  }),
  operation({
    id: 'getOrCreateWorkflow',
    method: 'POST',
    path: '/workflows/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a workflow',
    body: GetOrCreateWorkflowBodySchema.properties,
    response: Type.Object({ workflow: Model.Workflow, meta: CreatedMeta }),
  }),
] as const;
