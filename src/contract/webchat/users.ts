import { Type } from 'typebox';
import { FOREIGN_ID_MAX_LENGTH } from '../../domain/chat/foreign-ids.ts';
import { JsonObject, TagChangeMap, TagMap } from '../../domain/shared/schemas.ts';
import { WebchatUserSchema } from '../../domain/webchat/models.ts';
import { EmptySchema } from '../schemas.ts';
import { site, tag, user, visitor } from './define.ts';

const UserAnswer = Type.Object({ user: WebchatUserSchema });
const profile = {
  name: Type.Optional(Type.String({ maxLength: 200 })),
  pictureUrl: Type.Optional(Type.String({ maxLength: 40000 })),
};

export const webchatVisitorOperations = [
  visitor.operation({
    id: 'createUser',
    method: 'POST',
    path: '/users',
    access: 'write',
    tag,
    summary: 'Create a user and its key',
    description:
      'Shared mode: anyone. Personal mode: only with the channel’s encryption key as `x-admin-secret`. The webchat itself creates its user through `/initialize`.',
    status: 201,
    body: {
      ...profile,
      userData: Type.Optional(Type.Union([JsonObject, Type.String()])),
      attributes: Type.Optional(Type.Union([TagMap, Type.String()])),
    },
    response: Type.Object({ user: WebchatUserSchema, key: Type.String() }),
    handler: (d, visitor, body) => d.webchat.createUser(visitor, body),
  }),
  visitor.operation({
    id: 'sendPerfMetrics',
    method: 'POST',
    path: '/p',
    access: 'write',
    tag,
    summary: 'Accept the webchat’s performance metrics (ignored)',
    body: {
      duration: Type.Optional(Type.Number()),
      event: Type.Optional(Type.String()),
      properties: Type.Optional(JsonObject),
    },
    response: EmptySchema,
    handler: async () => ({}),
  }),
];

/** What a site's backend calls with the channel's admin secret. */
export const webchatSiteOperations = [
  site.operation({
    id: 'generateUserKey',
    method: 'POST',
    path: '/users/key',
    access: 'write',
    tag,
    summary: 'Mint a key for a user (site backends, with the admin secret)',
    description:
      'Needs `x-admin-secret`: the channel’s encryption key (personal mode). `expiresAt` is Unix time, in seconds or milliseconds.',
    body: {
      id: Type.String({ minLength: 1, maxLength: FOREIGN_ID_MAX_LENGTH }),
      expiresAt: Type.Optional(Type.Number({ minimum: 0 })),
    },
    response: Type.Object({ key: Type.String() }),
    handler: async (d, visitor, { id, expiresAt }) => ({
      key: await d.webchat.generateUserKey(visitor, id, expiresAt),
    }),
  }),
];

export const webchatUserOperations = [
  user.operation({
    id: 'getUser',
    method: 'GET',
    path: '/users/me',
    access: 'read',
    tag,
    summary: 'Get the user of the key',
    response: UserAnswer,
    handler: async (d, session) => ({ user: await d.webchat.getUser(session) }),
  }),
  user.operation({
    id: 'updateUser',
    method: 'PUT',
    path: '/users/me',
    access: 'write',
    tag,
    summary: 'Update the user of the key',
    description:
      '`userData` replaces the user’s data (`null` removes it); `attributes` are merged (`null` removes one).',
    body: {
      ...profile,
      userData: Type.Optional(Type.Union([JsonObject, Type.String(), Type.Null()])),
      attributes: Type.Optional(Type.Union([TagChangeMap, Type.String()])),
    },
    response: UserAnswer,
    handler: async (d, session, body) => ({ user: await d.webchat.updateUser(session, body) }),
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
      await d.webchat.deleteUser(session);
      return {};
    },
  }),
];
