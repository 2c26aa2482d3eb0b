import { Type } from 'typebox';
import { IdParam } from '../schemas.ts';
import {
  ANALYTICS_INTERVAL_NAMES,
  ANALYTICS_RECORDS_MAX,
  BotAnalyticsRecordSchema,
} from '../../domain/bots/schemas.ts';
import { operation } from '../operation.ts';

export const analyticsOperations = [
  operation({
    id: 'getBotAnalytics',
    method: 'GET',
    path: '/bots/:id/analytics',
    access: 'read',
    tag: 'Bots',
    summary: 'Read a bot’s activity per day or hour',
    description: `A bot's activity over a window, one record per period: the window cut from \`startDate\` into periods of \`interval\` (the last one ends at \`endDate\`), at most ${ANALYTICS_RECORDS_MAX}. Each record also has \`turns\`: events the bot finished, failures, and the p50/p99 time from queued to done.`,
    params: IdParam,
    query: {
      startDate: Type.String({ description: 'Start of the window (ISO 8601), inclusive' }),
      endDate: Type.String({ description: 'End of the window (ISO 8601), exclusive' }),
      interval: Type.Optional(
        Type.Enum([...ANALYTICS_INTERVAL_NAMES], {
          description: 'Length of one period; default: day',
        }),
      ),
    },
    response: Type.Object({ records: Type.Array(BotAnalyticsRecordSchema) }),
  }),
] as const;
