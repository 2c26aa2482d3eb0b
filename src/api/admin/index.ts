import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../auth.ts';
import { allowCors, PLATFORM_HEADERS } from '../cors.ts';
import type { PlatformApiOptions } from '../cors.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { accountRoutes } from './account.ts';
import { analyticsRoutes } from './analytics.ts';
import { botKeyRoutes } from './bot-keys.ts';
import { botRoutes } from './bots.ts';
import { botWebhookRoutes } from './bot-webhooks.ts';
import { integrationRoutes } from './integrations.ts';
import { logRoutes } from './logs.ts';
import { memberRoutes } from './members.ts';
import { workspaceRoutes } from './workspaces.ts';

/** The Admin API, under `/v1/admin`: workspaces, members, bots, keys, the account. */
export const adminApi: FastifyPluginAsyncTypebox<PlatformApiOptions> = async (app, { corsOrigins }) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.admin;
  });
  if (corsOrigins) await allowCors(app, { origins: () => corsOrigins, allowedHeaders: PLATFORM_HEADERS });
  requireAuth(app, app.domain, 'workspace');
  await app.register(accountRoutes);
  await app.register(workspaceRoutes);
  await app.register(memberRoutes);
  await app.register(botKeyRoutes);
  await app.register(botRoutes);
  await app.register(botWebhookRoutes);
  await app.register(integrationRoutes);
  await app.register(logRoutes);
  await app.register(analyticsRoutes);
};
