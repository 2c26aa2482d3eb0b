import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { pageSizeOf } from '../../domain/pagination.ts';
import { JsonObject } from '../../domain/schemas.ts';
import { listTagValues, TAGGED_TYPES } from '../../domain/tags.ts';
import type { TaggedType } from '../../domain/tags.ts';
import { invalidPayload } from '../../domain/errors.ts';
import { botActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, listOf, PageQuery } from '../common.ts';

const tags = ['Tags and analytics'];

function decodeAfter(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (typeof value === 'string') return value;
  } catch {
    // below
  }
  throw invalidPayload('nextToken is not a token of this list');
}

export const miscRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { analytics, store } = app.domain;

  app.get(
    '/tags/:key/values',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listTagValues',
        tags,
        description: 'The distinct values of a tag among the bot’s users, conversations or messages.',
        params: Type.Object({ key: Type.String() }),
        querystring: Type.Object({
          ...PageQuery,
          type: Type.Enum(Object.keys(TAGGED_TYPES) as TaggedType[]),
        }),
        response: { 200: listOf('tags', Type.Object({ value: Type.String() })), ...errorResponses },
      },
    },
    async (request) => {
      const pageSize = pageSizeOf(request.query);
      const values = await listTagValues(
        store.db,
        botActorOf(request).botId,
        request.params.key,
        request.query.type,
        decodeAfter(request.query.nextToken),
        pageSize + 1,
      );
      const served = values.slice(0, pageSize);
      const last = served[served.length - 1];
      const nextToken =
        values.length > pageSize && last !== undefined
          ? Buffer.from(JSON.stringify(last)).toString('base64url')
          : undefined;
      return { tags: served.map((value) => ({ value })), meta: { nextToken } };
    },
  );

  app.post(
    '/analytics',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'trackAnalytics',
        tags,
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), count: Type.Integer() }),
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await analytics.track(botActorOf(request), request.body.name, request.body.count);
      return {};
    },
  );

  app.post(
    '/observations',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'captureObservation',
        tags,
        body: Type.Object({
          id: Type.Optional(Type.String()),
          name: Type.String({ minLength: 1, maxLength: 200 }),
          data: JsonObject,
          messageId: Type.Optional(Type.String()),
          eventId: Type.Optional(Type.String()),
          conversationId: Type.Optional(Type.String()),
          userId: Type.Optional(Type.String()),
          errorId: Type.Optional(Type.String()),
          traceId: Type.Optional(Type.String()),
        }),
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await analytics.observe(botActorOf(request), request.body);
      return {};
    },
  );

  app.post(
    '/integrations/configure',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'configureIntegration',
        tags,
        description:
          'Accepted for integrations written for the hosted product; Parley has nothing to configure.',
        body: Type.Optional(JsonObject),
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async () => ({}),
  );
};
