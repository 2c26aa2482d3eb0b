import { Type } from 'typebox';
import { INT32, JsonObject } from '../../domain/shared/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Analytics';

export const analyticsOperations = [
  operation({
    id: 'trackAnalytics',
    method: 'POST',
    path: '/analytics',
    access: 'write',
    tag,
    summary: 'Count an analytics event',
    body: { name: Type.String({ minLength: 1, maxLength: 200 }), count: Type.Integer(INT32) },
    response: EmptySchema,
  }),
  operation({
    id: 'captureObservation',
    method: 'POST',
    path: '/observations',
    access: 'write',
    tag,
    summary: 'Record an observation',
    body: {
      id: Type.Optional(Type.String()),
      name: Type.String({ minLength: 1, maxLength: 200 }),
      data: JsonObject,
      messageId: Type.Optional(Type.String()),
      eventId: Type.Optional(Type.String()),
      conversationId: Type.Optional(Type.String()),
      userId: Type.Optional(Type.String()),
      errorId: Type.Optional(Type.String()),
      traceId: Type.Optional(Type.String()),
    },
    response: EmptySchema,
  }),
] as const;
