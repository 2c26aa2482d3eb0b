import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { analyticsOperations } from '../../contract/admin/analytics.ts';
import type { Handlers } from '../operation.ts';

export const analyticsHandlers = {
  getBotAnalytics: async (d, actor, { id, ...query }) => ({
    records: await d.botAnalytics.records(actor, id, query),
  }),
} satisfies Handlers<WorkspaceActor, typeof analyticsOperations>;
