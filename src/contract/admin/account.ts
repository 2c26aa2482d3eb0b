import { Type } from 'typebox';
import { Timestamp } from '../../domain/shared/schemas.ts';
import { EmptySchema, IdParam, KeyNote } from '../schemas.ts';
import {
  AccountSchema,
  PersonalAccessTokenSchema,
  UpdateAccountBodySchema,
} from '../../domain/workspace/schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Account';

export const accountOperations = [
  operation({
    id: 'getAccount',
    method: 'GET',
    path: '/account/me',
    access: 'read',
    tag,
    summary: 'Get the account of the token',
    response: Type.Object({ account: AccountSchema }),
  }),
  operation({
    id: 'updateAccount',
    method: 'PUT',
    path: '/account/me',
    access: 'write',
    tag,
    summary: 'Change the name and picture of the account of the token',
    description:
      'The display name is what colleagues see in the console and what visitors see of an agent who answers a handoff.',
    body: UpdateAccountBodySchema.properties,
    response: Type.Object({ account: AccountSchema }),
  }),
  operation({
    id: 'listPersonalAccessTokens',
    method: 'GET',
    path: '/account/pats',
    access: 'read',
    tag,
    summary: 'List your personal access tokens',
    response: Type.Object({ pats: Type.Array(PersonalAccessTokenSchema) }),
  }),
  operation({
    id: 'createPersonalAccessToken',
    method: 'POST',
    path: '/account/pats',
    access: 'write',
    tag,
    summary: 'Create a personal access token (its value is shown once)',
    description: 'The token value is returned once, here; only its hash is stored.',
    body: { note: KeyNote },
    response: Type.Object({
      pat: Type.Object({
        id: Type.String(),
        createdAt: Timestamp,
        note: Type.String(),
        value: Type.String(),
      }),
    }),
  }),
  operation({
    id: 'deletePersonalAccessToken',
    method: 'DELETE',
    path: '/account/pats/:id',
    access: 'write',
    tag,
    summary: 'Revoke a personal access token',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;

export const introspectionOperations = [
  operation({
    id: 'introspect',
    method: 'POST',
    path: '/introspect',
    // It tells what a token is and changes nothing.
    access: 'read',
    tag,
    summary: 'Tell what a token is: an account or a bot',
    description: 'Tells which workspace and account a token acts as, for the given bot.',
    body: { botId: Type.String() },
    response: Type.Object({ workspaceId: Type.String(), botId: Type.String(), userId: Type.String() }),
  }),
] as const;
