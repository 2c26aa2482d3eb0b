import { Type } from 'typebox';
import { TagMap } from '../../domain/shared/schemas.ts';
import {
  CreateUserBodySchema,
  GetOrCreateUserBodySchema,
  UpdateUserBodySchema,
  UserSchema,
} from '../../domain/runtime/users.ts';
import { listOperation, operation } from './define.ts';
import { CreatedMeta, EmptySchema, IdParam, SortQuery } from '../schemas.ts';

const tag = 'Users';
const UserAnswer = Type.Object({ user: UserSchema });

export const userOperations = [
  operation({
    id: 'createUser',
    method: 'POST',
    path: '/users',
    access: 'write',
    tag,
    summary: 'Create a user',
    status: 201,
    body: CreateUserBodySchema.properties,
    response: UserAnswer,
    handler: async (d, actor, body) => ({
      user: (await d.proactive.user(actor, body, 'new'))?.user ?? (await d.users.create(actor, body)),
    }),
  }),
  operation({
    id: 'getUser',
    method: 'GET',
    path: '/users/:id',
    access: 'read',
    tag,
    summary: 'Get a user',
    params: IdParam,
    response: UserAnswer,
    handler: async (d, actor, { id }) => ({ user: await d.users.get(actor, id) }),
  }),
  listOperation({
    id: 'listUsers',
    path: '/users',
    tag,
    summary: 'List users',
    query: {
      ...SortQuery,
      conversationId: Type.Optional(Type.String()),
      tags: Type.Optional(TagMap),
      afterDate: Type.Optional(Type.String({ format: 'date-time' })),
      beforeDate: Type.Optional(Type.String({ format: 'date-time' })),
      rangeField: SortQuery.sortField,
    },
    key: 'users',
    item: UserSchema,
    handler: (d, actor, query) => d.users.list(actor, query),
  }),
  operation({
    id: 'getOrCreateUser',
    method: 'POST',
    path: '/users/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a user',
    description: 'Matches on the tags named by `discriminateByTags` (all tags given, when none are named).',
    body: GetOrCreateUserBodySchema.properties,
    response: Type.Object({ user: UserSchema, meta: CreatedMeta }),
    handler: async (d, actor, body) => {
      const { user, created } =
        (await d.proactive.user(actor, body, 'reuse')) ?? (await d.users.getOrCreate(actor, body));
      return { user, meta: { created } };
    },
  }),
  operation({
    id: 'updateUser',
    method: 'PUT',
    path: '/users/:id',
    access: 'write',
    tag,
    summary: 'Update a user',
    params: IdParam,
    body: UpdateUserBodySchema.properties,
    response: UserAnswer,
    handler: async (d, actor, { id, ...body }) => ({ user: await d.users.update(actor, id, body) }),
  }),
  operation({
    id: 'deleteUser',
    method: 'DELETE',
    path: '/users/:id',
    access: 'write',
    tag,
    summary: 'Delete a user',
    params: IdParam,
    response: EmptySchema,
    handler: async (d, actor, { id }) => {
      await d.users.delete(actor, id);
      return {};
    },
  }),
];
