import { Type } from 'typebox';
import { JsonObject, TagChangeMap, TagMap } from '../../domain/shared/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { deleteUser } from '../chat/shared.ts';
import { tag } from './tag.ts';
import { Model } from '../models.ts';
import { ChatUserFieldsSchema, ForeignIdSchema } from '../../domain/chat/schemas.ts';
import { operation } from '../operation.ts';

const UserAnswer = Type.Object({ user: Model.WebchatUser });
/** The Chat API's user fields but its `profile` text: the webchat has `userData` instead. */
const { profile: _profile, ...profile } = ChatUserFieldsSchema.properties;

export const webchatVisitorOperations = [
  operation({
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
    response: Type.Object({ user: Model.WebchatUser, key: Type.String() }),
  }),
  operation({
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
  }),
] as const;

/** What a site's backend calls with the channel's admin secret. */
export const webchatSiteOperations = [
  operation({
    id: 'generateUserKey',
    method: 'POST',
    path: '/users/key',
    access: 'write',
    tag,
    summary: 'Mint a key for a user (site backends, with the admin secret)',
    description:
      'Needs `x-admin-secret`: the channel’s encryption key (personal mode). `expiresAt` is Unix time, in seconds or milliseconds.',
    body: {
      id: ForeignIdSchema,
      expiresAt: Type.Optional(Type.Number({ minimum: 0 })),
    },
    response: Type.Object({ key: Type.String() }),
  }),
] as const;

export const webchatUserOperations = [
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
    description:
      '`userData` replaces the user’s data (`null` removes it); `attributes` are merged (`null` removes one).',
    body: {
      ...profile,
      userData: Type.Optional(Type.Union([JsonObject, Type.String(), Type.Null()])),
      attributes: Type.Optional(Type.Union([TagChangeMap, Type.String()])),
    },
    response: UserAnswer,
  }),
  deleteUser(tag),
] as const;
