import type { BotActor } from '../../domain/workspace/actors.ts';
import type { eventOperations } from '../../contract/runtime/events.ts';
import type { Handlers } from '../operation.ts';

export const eventHandlers = {
  createEvent: async (d, actor, body) => ({ event: await d.events.create(actor, body) }),
  getEvent: async (d, actor, { id }) => ({ event: await d.events.get(actor, id) }),
  listEvents: (d, actor, query) => d.events.list(actor, query),
  cancelScheduledEvent: async (d, actor, { id }) => {
    await d.events.cancelScheduled(actor, id);
    return {};
  },
} satisfies Handlers<BotActor, typeof eventOperations>;
