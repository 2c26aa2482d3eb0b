import { Type } from 'typebox';
import { CreateEventBodySchema, EVENT_STATUSES, EventSchema } from '../../domain/runtime/events.ts';
import { listOperation, operation } from './define.ts';
import { EmptySchema, IdParam } from '../schemas.ts';

const tag = 'Events';
const EventAnswer = Type.Object({ event: EventSchema });

export const eventOperations = [
  operation({
    id: 'createEvent',
    method: 'POST',
    path: '/events',
    access: 'write',
    tag,
    summary: 'Create an event',
    description: 'With a schedule, the event waits with status `scheduled` until it is due, then is queued.',
    status: 201,
    body: CreateEventBodySchema.properties,
    response: EventAnswer,
    handler: async (d, actor, body) => ({ event: await d.events.create(actor, body) }),
  }),
  operation({
    id: 'getEvent',
    method: 'GET',
    path: '/events/:id',
    access: 'read',
    tag,
    summary: 'Get an event',
    params: IdParam,
    response: EventAnswer,
    handler: async (d, actor, { id }) => ({ event: await d.events.get(actor, id) }),
  }),
  listOperation({
    id: 'listEvents',
    path: '/events',
    tag,
    summary: 'List events',
    description: 'Newest first.',
    query: {
      type: Type.Optional(Type.String()),
      conversationId: Type.Optional(Type.String()),
      userId: Type.Optional(Type.String()),
      messageId: Type.Optional(Type.String()),
      workflowId: Type.Optional(Type.String()),
      status: Type.Optional(Type.Enum(EVENT_STATUSES)),
    },
    key: 'events',
    item: EventSchema,
    handler: (d, actor, query) => d.events.list(actor, query),
  }),
  operation({
    id: 'cancelScheduledEvent',
    method: 'DELETE',
    path: '/events/scheduled/:id',
    access: 'write',
    tag,
    summary: 'Cancel a scheduled event',
    params: IdParam,
    response: EmptySchema,
    handler: async (d, actor, { id }) => {
      await d.events.cancelScheduled(actor, id);
      return {};
    },
  }),
];
