import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { botActorOf } from '../auth.ts';
import { errorResponses } from '../common.ts';
import { ACTION_TYPE_MAX_LENGTH } from '../limits.ts';

const tags = ['Actions'];
const Free = Type.Record(Type.String(), Type.Unknown());

export const actionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { actions } = app.domain;

  app.post(
    '/actions',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'callAction',
        tags,
        description:
          'A `type` without a colon calls the bot’s own action; `alias:action` an installed integration’s (the built-in chat channel offers `chat:sendEvent`). A cacheable action answers a repeated input from its cache (`meta.cached`).',
        headers: Type.Object({
          'x-bot-id': Type.String(),
          'x-integration-id': Type.Optional(Type.String()),
          'x-integration-alias': Type.Optional(Type.String()),
        }),
        body: Type.Object(
          { type: Type.String({ maxLength: ACTION_TYPE_MAX_LENGTH }), input: Free },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            { output: Free, meta: Type.Object({ cached: Type.Boolean() }, { additionalProperties: false }) },
            { additionalProperties: false },
          ),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { output, cached } = await actions.call(
        botActorOf(request),
        request.body.type,
        request.body.input,
      );
      return { output, meta: { cached } };
    },
  );
};
