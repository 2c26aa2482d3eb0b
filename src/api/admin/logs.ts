import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BotLogSchema, LOG_PAGE_SIZE } from '../../domain/bots/bot-logs.ts';
import { workspaceActorOf } from '../auth.ts';
import { errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Bots'];

export const logRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { botLogs } = app.domain;

  app.get(
    '/bots/:id/logs',
    {
      schema: {
        operationId: 'getBotLogs',
        summary: 'Read a bot’s log lines',
        tags,
        description: `A bot's log lines in a time window, oldest first, ${LOG_PAGE_SIZE} a page. Unlike other lists, \`nextToken\` is at the top level of the response.`,
        params: IdParams,
        querystring: Type.Object({
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
        }),
        response: {
          200: Type.Object({ logs: Type.Array(BotLogSchema), nextToken: Type.Optional(Type.String()) }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const page = await botLogs.list(workspaceActorOf(request), request.params.id, request.query);
      return { logs: page.items, ...(page.nextToken !== undefined && { nextToken: page.nextToken }) };
    },
  );
};
