import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../domain/schemas.ts';
import { workspaceActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams } from '../common.ts';

const tags = ['Bot API keys'];
const BotApiKey = Type.Object({ id: Type.String(), createdAt: Timestamp, note: Type.String() });

export const botKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { botKeys } = app.domain;

  app.get(
    '/bots/baks',
    {
      config: { auth: 'workspace' },
      schema: {
        operationId: 'listBotApiKeys',
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
      config: { auth: 'workspace' },
      schema: {
        operationId: 'createBotApiKey',
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
      config: { auth: 'workspace' },
      schema: {
        operationId: 'deleteBotApiKey',
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
