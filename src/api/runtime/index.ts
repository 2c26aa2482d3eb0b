import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { botActorOf } from '../auth.ts';
import { EmptySchema, errorResponses } from '../common.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';

const tags = ['Runtime'];

/** The Runtime API, under `/v1/chat`: what bot code and integrations call, as one bot (`x-bot-id`). */
export const runtimeApi: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.runtime;
  });
  const { analytics } = app.domain;

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
};
