import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MemberSchema } from '../../domain/workspace/members.ts';
import { ROLES } from '../../domain/workspace/roles.ts';
import { Email } from '../../domain/shared/schemas.ts';
import { workspaceActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams, listOf, PageQuery } from '../../contract/schemas.ts';

const tags = ['Workspace members'];
const Role = Type.Enum(ROLES);

export const memberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { members } = app.domain;

  app.get(
    '/workspace-members',
    {
      schema: {
        operationId: 'listWorkspaceMembers',
        summary: 'List the members of the workspace',
        tags,
        querystring: Type.Object(PageQuery),
        response: { 200: listOf('members', MemberSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await members.list(workspaceActorOf(request), request.query);
      return { members: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.get(
    '/workspace-members/me',
    {
      schema: {
        operationId: 'getWorkspaceMember',
        summary: 'Get your own membership of the workspace',
        tags,
        response: { 200: MemberSchema, ...errorResponses },
      },
    },
    async (request) => members.me(workspaceActorOf(request)),
  );

  app.post(
    '/workspace-members',
    {
      schema: {
        operationId: 'createWorkspaceMember',
        summary: 'Add a member to the workspace',
        tags,
        description:
          'Adds the account with this email (created on first use) to the workspace. No email is sent: give the new member a first token with `parley token create --email <email>`.',
        body: Type.Object({ email: Email, role: Role, sendEmail: Type.Optional(Type.Boolean()) }),
        response: { 200: MemberSchema, ...errorResponses },
      },
    },
    async (request) => members.create(workspaceActorOf(request), request.body.email, request.body.role),
  );

  app.put(
    '/workspace-members/:id',
    {
      schema: {
        operationId: 'updateWorkspaceMember',
        summary: 'Change a member’s role',
        tags,
        params: IdParams,
        body: Type.Object({ role: Type.Optional(Role) }),
        response: { 200: MemberSchema, ...errorResponses },
      },
    },
    async (request) => members.update(workspaceActorOf(request), request.params.id, request.body.role),
  );

  app.delete(
    '/workspace-members/:id',
    {
      schema: {
        operationId: 'deleteWorkspaceMember',
        summary: 'Remove a member from the workspace',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await members.delete(workspaceActorOf(request), request.params.id);
      return {};
    },
  );
};
