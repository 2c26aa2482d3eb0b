import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../domain/shared/schemas.ts';
import { workspaceActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Bot API keys'];
const BotApiKey = Type.Object({ id: Type.String(), createdAt: Timestamp, note: Type.String() });

export const botKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { botKeys } = app.domain;

  app.get(
    '/bots/baks',
    {
      schema: {
        operationId: 'listBotApiKeys',
        summary: 'List a bot’s API keys',
        tags,
        querystring: Type.Object({ botId: Type.String() }),
        response: { 200: Type.Object({ baks: Type.Array(BotApiKey) }), ...errorResponses },
      },
    },
    async (request) => ({ baks: await botKeys.list(workspaceActorOf(request), request.query.botId) }),
  );

  app.post(
    '/bots/baks',
    {
      schema: {
        operationId: 'createBotApiKey',
        summary: 'Create a bot API key (its value is shown once)',
        tags,
        description: 'The key value is returned once, here; only its hash is stored.',
        body: Type.Object({ botId: Type.String(), note: Type.Optional(Type.String({ maxLength: 500 })) }),
        response: {
          200: Type.Object({
            id: Type.String(),
            createdAt: Timestamp,
            note: Type.String(),
            value: Type.String(),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => botKeys.create(workspaceActorOf(request), request.body.botId, request.body.note ?? ''),
  );

  app.delete(
    '/bots/baks/:id',
    {
      schema: {
        operationId: 'deleteBotApiKey',
        summary: 'Revoke a bot API key',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await botKeys.delete(workspaceActorOf(request), request.params.id);
      return {};
    },
  );
};
