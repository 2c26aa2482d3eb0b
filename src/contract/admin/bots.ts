import { Type } from 'typebox';
import { TagMap } from '../../domain/shared/schemas.ts';
import { EmptySchema, IdParam, SortQuery } from '../schemas.ts';
import { Model } from '../models.ts';
import { BotSummarySchema, CreateBotBodySchema, UpdateBotBodySchema } from '../../domain/bots/schemas.ts';
import { listOperation, operation } from '../operation.ts';
import { HEADERS } from '../headers.ts';

const tag = 'Bots';
const BotAnswer = Type.Object({ bot: Model.Bot });

/** How the bot's `integrations` are keyed, in the body and the answer (as the hosted API reads the header). */
const IntegrationsKeys = {
  [HEADERS.multipleIntegrations]: Type.Optional(
    Type.String({
      description:
        '`true`: `integrations` are keyed by alias (as every `bp` since 4.20 sends them); otherwise by integration id',
    }),
  ),
};

export const botOperations = [
  listOperation({
    id: 'listBots',
    path: '/bots',
    tag,
    summary: 'List the workspace’s bots',
    query: {
      dev: Type.Optional(
        Type.Boolean({ description: 'true: development bots only; otherwise production bots' }),
      ),
      tags: Type.Optional(TagMap),
      integrationNames: Type.Optional(Type.Array(Type.String())),
      pluginNames: Type.Optional(Type.Array(Type.String())),
      ...SortQuery,
    },
    key: 'bots',
    item: BotSummarySchema,
  }),
  operation({
    id: 'getBot',
    method: 'GET',
    path: '/bots/:id',
    access: 'read',
    tag,
    summary: 'Get a bot, with its chat channel and webchat client id',
    params: IdParam,
    headers: IntegrationsKeys,
    response: BotAnswer,
    botItself: true,
  }),
  operation({
    id: 'createBot',
    method: 'POST',
    path: '/bots',
    access: 'write',
    tag,
    summary: 'Create a bot',
    body: CreateBotBodySchema.properties,
    response: BotAnswer,
  }),
  operation({
    id: 'updateBot',
    method: 'PUT',
    path: '/bots/:id',
    access: 'write',
    tag,
    summary: 'Update or deploy a bot (its chat channel’s configuration included)',
    description:
      'A bot’s own API key may call it for itself to change its `tags` and nothing else (the ADK runtime keeps its state in bot tags).',
    params: IdParam,
    body: UpdateBotBodySchema.properties,
    headers: IntegrationsKeys,
    response: BotAnswer,
    botItself: true,
  }),
  operation({
    id: 'deleteBot',
    method: 'DELETE',
    path: '/bots/:id',
    access: 'write',
    tag,
    summary: 'Delete a bot',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;
