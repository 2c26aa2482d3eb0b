import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ANALYTICS_INTERVALS,
  ANALYTICS_RECORDS_MAX,
  BotAnalyticsRecordSchema,
} from '../../domain/bots/bot-analytics.ts';
import type { AnalyticsInterval } from '../../domain/bots/bot-analytics.ts';
import { workspaceActorOf } from '../auth.ts';
import { errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Bots'];

export const analyticsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { botAnalytics } = app.domain;

  app.get(
    '/bots/:id/analytics',
    {
      config: { auth: 'workspace' },
      schema: {
        operationId: 'getBotAnalytics',
        summary: 'Read a bot’s activity per day or hour',
        tags,
        description: `A bot's activity over a window, one record per period: the window cut from \`startDate\` into periods of \`interval\` (the last one ends at \`endDate\`), at most ${ANALYTICS_RECORDS_MAX}. Each record also has \`turns\`: events the bot finished, failures, and the p50/p99 time from queued to done.`,
        params: IdParams,
        querystring: Type.Object({
          startDate: Type.String({ description: 'Start of the window (ISO 8601), inclusive' }),
          endDate: Type.String({ description: 'End of the window (ISO 8601), exclusive' }),
          interval: Type.Optional(
            Type.Enum(Object.keys(ANALYTICS_INTERVALS) as AnalyticsInterval[], {
              description: 'Length of one period; default: day',
            }),
          ),
        }),
        response: {
          200: Type.Object({ records: Type.Array(BotAnalyticsRecordSchema) }),
          ...errorResponses,
        },
      },
    },
    async (request) => ({
      records: await botAnalytics.records(workspaceActorOf(request), request.params.id, request.query),
    }),
  );
};
