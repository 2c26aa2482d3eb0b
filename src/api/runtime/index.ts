import type { FastifyPluginAsync } from 'fastify';
import { RUNTIME_HANDLERS } from '../../handlers/runtime/index.ts';
import { botActorOf, requireAuth } from '../auth.ts';
import { allowCors, OPERATOR_CORS_SETTING, PLATFORM_HEADERS } from '../cors.ts';
import type { PlatformApiOptions } from '../cors.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { routeOperations } from '../operations.ts';

/** The Runtime API, under `/v1/chat`: what bot code and integrations call, as one bot (`x-bot-id`). */
export const runtimeApi: FastifyPluginAsync<PlatformApiOptions> = async (app, { corsOrigins }) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.runtime;
  });
  if (corsOrigins)
    await allowCors(app, {
      origins: () => corsOrigins,
      setIn: OPERATOR_CORS_SETTING,
      allowedHeaders: PLATFORM_HEADERS,
    });
  requireAuth(app, app.domain, 'bot');
  routeOperations(app, RUNTIME_HANDLERS, botActorOf);
};
