import type { FastifyPluginAsync } from 'fastify';
import { FILES_HANDLERS } from '../../handlers/files/index.ts';
import { botActorOf, requireAuth } from '../auth.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { routeOperations } from '../operations.ts';

/**
 * The Files API, under `/v1` (its routes are `/files...`): what bots and integrations call, as one
 * bot (`x-bot-id`). Contents move outside it, through signed URLs (content.ts).
 */
export const filesApi: FastifyPluginAsync = async (app) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.files;
  });
  requireAuth(app, app.domain, 'bot');
  routeOperations(app, FILES_HANDLERS, botActorOf);
};
