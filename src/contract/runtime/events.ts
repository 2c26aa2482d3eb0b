import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { CreateEventBodySchema } from '../../domain/runtime/schemas.ts';
import { listOperation, operation } from '../operation.ts';
import { EVENT_STATUSES } from '../../value-sets.ts';

const tag = 'Events';
const EventAnswer = Type.Object({ event: Model.Event });

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
    item: Model.Event,
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
  }),
] as const;
