import { Type } from 'typebox';
import { TagMap } from '../../domain/shared/schemas.ts';
import { CreatedMeta, EmptySchema, IdParam, SortQuery } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  CreateUserBodySchema,
  GetOrCreateUserBodySchema,
  UpdateUserBodySchema,
} from '../../domain/runtime/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Users';
const UserAnswer = Type.Object({ user: Model.User });

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
    item: Model.User,
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
    response: Type.Object({ user: Model.User, meta: CreatedMeta }),
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
  }),
] as const;
