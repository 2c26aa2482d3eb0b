import type { FastifyPluginAsync } from 'fastify';
import { TABLES_HANDLERS } from '../../handlers/tables/index.ts';
import { botActorOf, requireAuth } from '../auth.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { routeOperations } from '../operations.ts';

/** The Tables API, under `/v1` (its routes are `/tables...`): a bot's tables and rows, as that bot (`x-bot-id`). */
export const tablesApi: FastifyPluginAsync = async (app) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.tables;
  });
  requireAuth(app, app.domain, 'bot');
  routeOperations(app, TABLES_HANDLERS, botActorOf);
};
