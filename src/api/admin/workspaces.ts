import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import { notFound } from '../../domain/shared/errors.ts';
import { Handle, WorkspaceChangesSchema, WorkspaceSchema } from '../../domain/workspace/workspaces.ts';
import { accountIdOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams, listOf, PageQuery } from '../../contract/schemas.ts';

const tags = ['Workspaces'];

export const workspaceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { workspaces, members } = app.domain;

  /** Routes that name a workspace in their path act in it; a workspace the account is not in is not found. */
  async function actorIn(accountId: string, workspaceId: string): Promise<WorkspaceActor> {
    const role = await members.roleOf(accountId, workspaceId);
    if (!role) throw notFound('Workspace', workspaceId);
    return { accountId, workspaceId, role };
  }

  app.post(
    '/workspaces',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'createWorkspace',
        summary: 'Create a workspace',
        tags,
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          billingVersion: Type.Optional(Type.String()),
        }),
        response: { 200: WorkspaceSchema, ...errorResponses },
      },
    },
    async (request) => workspaces.create(accountIdOf(request), request.body.name),
  );

  app.get(
    '/workspaces',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'listWorkspaces',
        summary: 'List the workspaces you are a member of',
        tags,
        querystring: Type.Object({ ...PageQuery, handle: Type.Optional(Type.String()) }),
        response: { 200: listOf('workspaces', WorkspaceSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await workspaces.list(accountIdOf(request), request.query);
      return { workspaces: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.put(
    '/workspaces/handle-availability',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'checkHandleAvailability',
        summary: 'Whether a workspace handle is free to claim (with free ones like it when it is not)',
        tags,
        body: Type.Object({ handle: Handle }),
        response: {
          200: Type.Object({ available: Type.Boolean(), suggestions: Type.Array(Type.String()) }),
          ...errorResponses,
        },
      },
    },
    async (request) => workspaces.handleAvailability(request.body.handle),
  );

  app.get(
    '/workspaces/:id',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'getWorkspace',
        summary: 'Get a workspace',
        tags,
        params: IdParams,
        response: { 200: WorkspaceSchema, ...errorResponses },
      },
    },
    async (request) => workspaces.get(accountIdOf(request), request.params.id),
  );

  app.put(
    '/workspaces/:id',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'updateWorkspace',
        summary: 'Update a workspace',
        tags,
        params: IdParams,
        body: WorkspaceChangesSchema,
        response: { 200: WorkspaceSchema, ...errorResponses },
      },
    },
    async (request) => {
      const actor = await actorIn(accountIdOf(request), request.params.id);
      return workspaces.update(actor, request.params.id, request.body);
    },
  );

  app.delete(
    '/workspaces/:id',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'deleteWorkspace',
        summary: 'Delete a workspace',
        tags,
        description: 'Deletes the workspace with its members, bots and everything they hold. Owner only.',
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      const actor = await actorIn(accountIdOf(request), request.params.id);
      await workspaces.delete(actor, request.params.id);
      return {};
    },
  );
};
