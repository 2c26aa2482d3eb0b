import { Type } from 'typebox';
import { tag } from './tag.ts';
import { deleteUser } from './shared.ts';
import { Model } from '../models.ts';
import { ChatUserFieldsSchema, ForeignIdSchema } from '../../domain/chat/schemas.ts';
import { operation } from '../operation.ts';

const UserAnswer = Type.Object({ user: Model.ChatUser });

export const chatVisitorOperations = [
  operation({
    id: 'createUser',
    method: 'POST',
    path: '/users',
    access: 'write',
    tag,
    summary: 'Create a user and its key',
    description: 'Shared mode only: the server signs and returns the new user’s key.',
    status: 201,
    body: {
      ...ChatUserFieldsSchema.properties,
      id: Type.Optional(ForeignIdSchema),
    },
    response: Type.Object({ user: Model.ChatUser, key: Type.String() }),
  }),
  operation({
    id: 'getOrCreateUser',
    method: 'POST',
    path: '/users/get-or-create',
    access: 'write',
    tag,
    summary: 'Get the user of a key, creating it on first use',
    status: 201,
    body: ChatUserFieldsSchema.properties,
    response: UserAnswer,
  }),
] as const;

export const chatUserOperations = [
  operation({
    id: 'getUser',
    method: 'GET',
    path: '/users/me',
    access: 'read',
    tag,
    summary: 'Get the user of the key',
    response: UserAnswer,
  }),
  operation({
    id: 'updateUser',
    method: 'PUT',
    path: '/users/me',
    access: 'write',
    tag,
    summary: 'Update the user of the key',
    body: ChatUserFieldsSchema.properties,
    response: UserAnswer,
  }),
  deleteUser(tag),
] as const;
