import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MemberSchema } from '../../domain/members.ts';
import { ROLES } from '../../domain/roles.ts';
import { Email } from '../../domain/schemas.ts';
import { workspaceActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams, listOf, PageQuery } from '../common.ts';

const tags = ['Workspace members'];
const Role = Type.Enum(ROLES);

export const memberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { members } = app.domain;

  app.get(
    '/workspace-members',
    {
      config: { auth: 'workspace' },
      schema: {
        operationId: 'listWorkspaceMembers',
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
      config: { auth: 'workspace' },
      schema: { operationId: 'getWorkspaceMember', tags, response: { 200: MemberSchema, ...errorResponses } },
    },
    async (request) => members.me(workspaceActorOf(request)),
  );

  app.post(
    '/workspace-members',
    {
      config: { auth: 'workspace' },
      schema: {
        operationId: 'createWorkspaceMember',
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
      config: { auth: 'workspace' },
      schema: {
        operationId: 'updateWorkspaceMember',
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
      config: { auth: 'workspace' },
      schema: {
        operationId: 'deleteWorkspaceMember',
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
