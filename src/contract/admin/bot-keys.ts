import { Type } from 'typebox';
import { Timestamp } from '../../domain/shared/schemas.ts';
import { EmptySchema, IdParam, KeyNote } from '../schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Bot API keys';
const BotApiKey = Type.Object({ id: Type.String(), createdAt: Timestamp, note: Type.String() });

export const botKeyOperations = [
  operation({
    id: 'listBotApiKeys',
    method: 'GET',
    path: '/bots/baks',
    access: 'read',
    tag,
    summary: 'List a bot’s API keys',
    query: { botId: Type.String() },
    response: Type.Object({ baks: Type.Array(BotApiKey) }),
  }),
  operation({
    id: 'createBotApiKey',
    method: 'POST',
    path: '/bots/baks',
    access: 'write',
    tag,
    summary: 'Create a bot API key (its value is shown once)',
    description: 'The key value is returned once, here; only its hash is stored.',
    body: { botId: Type.String(), note: Type.Optional(KeyNote) },
    response: Type.Object({ ...BotApiKey.properties, value: Type.String() }),
  }),
  operation({
    id: 'deleteBotApiKey',
    method: 'DELETE',
    path: '/bots/baks/:id',
    access: 'write',
    tag,
    summary: 'Revoke a bot API key',
    params: IdParam,
    response: EmptySchema,
  }),
] as const;
