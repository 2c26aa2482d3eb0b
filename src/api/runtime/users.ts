import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TagMap } from '../../domain/schemas.ts';
import {
  CreateUserBodySchema,
  GetOrCreateUserBodySchema,
  UpdateUserBodySchema,
  UserSchema,
} from '../../domain/users.ts';
import { botActorOf } from '../auth.ts';
import {
  CreatedMeta,
  EmptySchema,
  errorResponses,
  IdParams,
  listOf,
  PageQuery,
  SortQuery,
} from '../common.ts';

const tags = ['Users'];
const UserResponse = Type.Object({ user: UserSchema });

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { users } = app.domain;

  app.post(
    '/users',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'createUser',
        tags,
        body: CreateUserBodySchema,
        response: { 201: UserResponse, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ user: await users.create(botActorOf(request), request.body) }),
  );

  app.get(
    '/users/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getUser',
        tags,
        params: IdParams,
        response: { 200: UserResponse, ...errorResponses },
      },
    },
    async (request) => ({ user: await users.get(botActorOf(request), request.params.id) }),
  );

  app.get(
    '/users',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listUsers',
        tags,
        querystring: Type.Object({
          ...PageQuery,
          ...SortQuery,
          conversationId: Type.Optional(Type.String()),
          tags: Type.Optional(TagMap),
          afterDate: Type.Optional(Type.String({ format: 'date-time' })),
          beforeDate: Type.Optional(Type.String({ format: 'date-time' })),
          rangeField: SortQuery.sortField,
        }),
        response: { 200: listOf('users', UserSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await users.list(botActorOf(request), request.query);
      return { users: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.post(
    '/users/get-or-create',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getOrCreateUser',
        tags,
        body: GetOrCreateUserBodySchema,
        response: { 200: Type.Object({ user: UserSchema, meta: CreatedMeta }), ...errorResponses },
      },
    },
    async (request) => {
      const { user, created } = await users.getOrCreate(botActorOf(request), request.body);
      return { user, meta: { created } };
    },
  );

  app.put(
    '/users/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'updateUser',
        tags,
        params: IdParams,
        body: UpdateUserBodySchema,
        response: { 200: UserResponse, ...errorResponses },
      },
    },
    async (request) => ({ user: await users.update(botActorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/users/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'deleteUser',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await users.delete(botActorOf(request), request.params.id);
      return {};
    },
  );
};
