import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateEventBodySchema, EVENT_STATUSES, EventSchema } from '../../domain/events.ts';
import { botActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams, listOf, PageQuery } from '../common.ts';

const tags = ['Events'];
const EventResponse = Type.Object({ event: EventSchema });

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { events } = app.domain;

  app.post(
    '/events',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'createEvent',
        tags,
        description:
          'With a schedule, the event waits with status `scheduled` until it is due, then is queued.',
        body: CreateEventBodySchema,
        response: { 201: EventResponse, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ event: await events.create(botActorOf(request), request.body) }),
  );

  app.get(
    '/events/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getEvent',
        tags,
        params: IdParams,
        response: { 200: EventResponse, ...errorResponses },
      },
    },
    async (request) => ({ event: await events.get(botActorOf(request), request.params.id) }),
  );

  app.get(
    '/events',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listEvents',
        tags,
        description: 'Newest first.',
        querystring: Type.Object({
          ...PageQuery,
          type: Type.Optional(Type.String()),
          conversationId: Type.Optional(Type.String()),
          userId: Type.Optional(Type.String()),
          messageId: Type.Optional(Type.String()),
          workflowId: Type.Optional(Type.String()),
          status: Type.Optional(Type.Enum(EVENT_STATUSES)),
        }),
        response: { 200: listOf('events', EventSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await events.list(botActorOf(request), request.query);
      return { events: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.delete(
    '/events/scheduled/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'cancelScheduledEvent',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await events.cancelScheduled(botActorOf(request), request.params.id);
      return {};
    },
  );
};
