import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { Handle, WorkspaceChangesSchema } from '../../domain/workspace/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Workspaces';

export const workspaceOperations = [
  operation({
    id: 'createWorkspace',
    method: 'POST',
    path: '/workspaces',
    access: 'write',
    tag,
    summary: 'Create a workspace',
    body: {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      billingVersion: Type.Optional(Type.String()),
    },
    response: Model.Workspace,
  }),
  listOperation({
    id: 'listWorkspaces',
    path: '/workspaces',
    tag,
    summary: 'List the workspaces you are a member of',
    query: { handle: Type.Optional(Type.String()) },
    key: 'workspaces',
    item: Model.Workspace,
  }),
  operation({
    id: 'checkHandleAvailability',
    method: 'PUT',
    path: '/workspaces/handle-availability',
    // It answers whether a handle is taken and claims nothing.
    access: 'read',
    tag,
    summary: 'Whether a workspace handle is free to claim (with free ones like it when it is not)',
    body: { handle: Handle },
    response: Type.Object({ available: Type.Boolean(), suggestions: Type.Array(Type.String()) }),
  }),
  operation({
    id: 'getWorkspace',
    method: 'GET',
    path: '/workspaces/:id',
    access: 'read',
    tag,
    summary: 'Get a workspace',
    params: IdParam,
    response: Model.Workspace,
  }),
  operation({
    id: 'updateWorkspace',
    method: 'PUT',
    path: '/workspaces/:id',
    access: 'write',
    tag,
    summary: 'Update a workspace',
    params: IdParam,
    body: WorkspaceChangesSchema.properties,
    response: Model.Workspace,
  }),
  operation({
    id: 'deleteWorkspace',
    method: 'DELETE',
    path: '/workspaces/:id',
    access: 'write',
    tag,
    summary: 'Delete a workspace',
    description: 'Deletes the workspace with its members, bots and everything they hold. Owner only.',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;
