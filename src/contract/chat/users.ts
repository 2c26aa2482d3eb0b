import { Type } from 'typebox';
import { ChatUserFieldsSchema, ChatUserSchema } from '../../domain/chat/chat.ts';
import { FOREIGN_ID_MAX_LENGTH } from '../../domain/chat/foreign-ids.ts';
import { EmptySchema } from '../schemas.ts';
import { tag, user, visitor } from './define.ts';

const UserAnswer = Type.Object({ user: ChatUserSchema });

export const chatVisitorOperations = [
  visitor.operation({
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
      id: Type.Optional(Type.String({ minLength: 1, maxLength: FOREIGN_ID_MAX_LENGTH })),
    },
    response: Type.Object({ user: ChatUserSchema, key: Type.String() }),
    handler: (d, visitor, body) => d.chat.createUser(visitor, body),
  }),
  visitor.operation({
    id: 'getOrCreateUser',
    method: 'POST',
    path: '/users/get-or-create',
    access: 'write',
    tag,
    summary: 'Get the user of a key, creating it on first use',
    status: 201,
    body: ChatUserFieldsSchema.properties,
    response: UserAnswer,
    handler: async (d, visitor, body) => ({ user: await d.chat.getOrCreateUser(visitor, visitor.key, body) }),
  }),
];

export const chatUserOperations = [
  user.operation({
    id: 'getUser',
    method: 'GET',
    path: '/users/me',
    access: 'read',
    tag,
    summary: 'Get the user of the key',
    response: UserAnswer,
    handler: async (d, session) => ({ user: await d.chat.getUser(session) }),
  }),
  user.operation({
    id: 'updateUser',
    method: 'PUT',
    path: '/users/me',
    access: 'write',
    tag,
    summary: 'Update the user of the key',
    body: ChatUserFieldsSchema.properties,
    response: UserAnswer,
    handler: async (d, session, body) => ({ user: await d.chat.updateUser(session, body) }),
  }),
  user.operation({
    id: 'deleteUser',
    method: 'DELETE',
    path: '/users/me',
    access: 'write',
    tag,
    summary: 'Delete the user of the key',
    response: EmptySchema,
    handler: async (d, session) => {
      await d.chat.deleteUser(session);
      return {};
    },
  }),
];
