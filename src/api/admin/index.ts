import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { accountRoutes } from './account.ts';
import { botKeyRoutes } from './bot-keys.ts';
import { botRoutes } from './bots.ts';
import { logRoutes } from './logs.ts';
import { memberRoutes } from './members.ts';
import { workspaceRoutes } from './workspaces.ts';

/** The Admin API, under `/v1/admin`: workspaces, members, bots, keys, the account. */
export const adminApi: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.admin;
  });
  await app.register(accountRoutes);
  await app.register(workspaceRoutes);
  await app.register(memberRoutes);
  await app.register(botKeyRoutes);
  await app.register(botRoutes);
  await app.register(logRoutes);
};
