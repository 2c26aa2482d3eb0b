import { Type } from 'typebox';
import { IdParam } from '../schemas.ts';
import { BotLogSchema, LOG_PAGE_SIZE } from '../../domain/bots/schemas.ts';
import { operation } from '../operation.ts';

export const logOperations = [
  // Not a `listOperation`: the hosted API answers this list's `nextToken` at the top level.
  operation({
    id: 'getBotLogs',
    method: 'GET',
    path: '/bots/:id/logs',
    access: 'read',
    tag: 'Bots',
    summary: 'Read a bot’s log lines',
    description: `A bot's log lines in a time window, oldest first, ${LOG_PAGE_SIZE} a page. Unlike other lists, \`nextToken\` is at the top level of the response.`,
    params: IdParam,
    query: {
      timeStart: Type.String({ description: 'Start of the window (ISO 8601), inclusive' }),
      timeEnd: Type.Optional(
        Type.String({ description: 'End of the window (ISO 8601), inclusive; default: now' }),
      ),
      level: Type.Optional(
        Type.String({ description: 'Only lines of exactly this level: debug, info, warn or error' }),
      ),
      userId: Type.Optional(Type.String()),
      workflowId: Type.Optional(Type.String()),
      conversationId: Type.Optional(Type.String()),
      messageContains: Type.Optional(
        Type.String({ description: 'Only lines whose message contains this text (case-sensitive)' }),
      ),
      nextToken: Type.Optional(Type.String({ description: 'The `nextToken` of the previous page' })),
    },
    response: Type.Object({ logs: Type.Array(BotLogSchema), nextToken: Type.Optional(Type.String()) }),
  }),
] as const;
