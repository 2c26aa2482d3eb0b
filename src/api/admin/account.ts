import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AccountSchema, PersonalAccessTokenSchema } from '../../domain/workspace/accounts.ts';
import { introspect } from '../../domain/workspace/auth.ts';
import { Timestamp } from '../../domain/shared/schemas.ts';
import { accountIdOf, principalOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Account'];

export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { accounts, auth } = app.domain;

  app.get(
    '/account/me',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'getAccount',
        summary: 'Get the account of the token',
        tags,
        response: { 200: Type.Object({ account: AccountSchema }), ...errorResponses },
      },
    },
    async (request) => ({ account: await accounts.get(accountIdOf(request)) }),
  );

  app.get(
    '/account/pats',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'listPersonalAccessTokens',
        summary: 'List your personal access tokens',
        tags,
        response: { 200: Type.Object({ pats: Type.Array(PersonalAccessTokenSchema) }), ...errorResponses },
      },
    },
    async (request) => ({ pats: await accounts.listTokens(accountIdOf(request)) }),
  );

  app.post(
    '/account/pats',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'createPersonalAccessToken',
        summary: 'Create a personal access token (its value is shown once)',
        tags,
        description: 'The token value is returned once, here; only its hash is stored.',
        body: Type.Object({ note: Type.String({ maxLength: 500 }) }),
        response: {
          200: Type.Object({
            pat: Type.Object({
              id: Type.String(),
              createdAt: Timestamp,
              note: Type.String(),
              value: Type.String(),
            }),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => ({ pat: await accounts.createToken(accountIdOf(request), request.body.note) }),
  );

  app.delete(
    '/account/pats/:id',
    {
      config: { auth: 'account' },
      schema: {
        operationId: 'deletePersonalAccessToken',
        summary: 'Revoke a personal access token',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await accounts.deleteToken(accountIdOf(request), request.params.id);
      return {};
    },
  );

  app.post(
    '/introspect',
    {
      config: { auth: 'token' },
      schema: {
        operationId: 'introspect',
        summary: 'Tell what a token is: an account or a bot',
        tags,
        description: 'Tells which workspace and account a token acts as, for the given bot.',
        body: Type.Object({ botId: Type.String() }),
        response: {
          200: Type.Object({ workspaceId: Type.String(), botId: Type.String(), userId: Type.String() }),
          ...errorResponses,
        },
      },
    },
    async (request) => introspect(auth, principalOf(request), request.body.botId),
  );
};
