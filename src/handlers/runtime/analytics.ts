import type { BotActor } from '../../domain/workspace/actors.ts';
import type { analyticsOperations } from '../../contract/runtime/analytics.ts';
import type { Handlers } from '../operation.ts';

export const analyticsHandlers = {
  trackAnalytics: async (d, actor, { name, count }) => {
    await d.analytics.track(actor, name, count);
    return {};
  },
  captureObservation: async (d, actor, body) => {
    await d.analytics.observe(actor, body);
    return {};
  },
} satisfies Handlers<BotActor, typeof analyticsOperations>;
