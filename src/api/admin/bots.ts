import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  BotSchema,
  BotSummarySchema,
  CreateBotBodySchema,
  UpdateBotBodySchema,
} from '../../domain/bots/bots.ts';
import { TagMap } from '../../domain/shared/schemas.ts';
import { workspaceActorOf } from '../auth.ts';
import {
  EmptySchema,
  errorResponses,
  IdParams,
  listOf,
  PageQuery,
  SortQuery,
} from '../../contract/schemas.ts';

const tags = ['Bots'];
const BotResponse = Type.Object({ bot: BotSchema });

export const botRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { bots } = app.domain;

  app.get(
    '/bots',
    {
      schema: {
        operationId: 'listBots',
        summary: 'List the workspace’s bots',
        tags,
        querystring: Type.Object({
          ...PageQuery,
          dev: Type.Optional(
            Type.Boolean({ description: 'true: development bots only; otherwise production bots' }),
          ),
          tags: Type.Optional(TagMap),
          integrationNames: Type.Optional(Type.Array(Type.String())),
          pluginNames: Type.Optional(Type.Array(Type.String())),
          ...SortQuery,
        }),
        response: { 200: listOf('bots', BotSummarySchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await bots.list(workspaceActorOf(request), request.query);
      return { bots: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.get(
    '/bots/:id',
    {
      schema: {
        operationId: 'getBot',
        summary: 'Get a bot, with its chat channel and webchat client id',
        tags,
        params: IdParams,
        response: { 200: BotResponse, ...errorResponses },
      },
    },
    async (request) => ({ bot: await bots.get(workspaceActorOf(request), request.params.id) }),
  );

  app.post(
    '/bots',
    {
      schema: {
        operationId: 'createBot',
        summary: 'Create a bot',
        tags,
        body: Type.Optional(CreateBotBodySchema),
        response: { 200: BotResponse, ...errorResponses },
      },
    },
    async (request) => ({ bot: await bots.create(workspaceActorOf(request), request.body ?? {}) }),
  );

  app.put(
    '/bots/:id',
    {
      schema: {
        operationId: 'updateBot',
        summary: 'Update or deploy a bot (its chat channel’s configuration included)',
        tags,
        params: IdParams,
        body: Type.Optional(UpdateBotBodySchema),
        response: { 200: BotResponse, ...errorResponses },
      },
    },
    async (request) => ({
      bot: await bots.update(workspaceActorOf(request), request.params.id, request.body ?? {}),
    }),
  );

  app.delete(
    '/bots/:id',
    {
      schema: {
        operationId: 'deleteBot',
        summary: 'Delete a bot',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await bots.delete(workspaceActorOf(request), request.params.id);
      return {};
    },
  );
};
