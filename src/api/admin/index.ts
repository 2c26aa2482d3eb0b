import type { FastifyPluginAsync } from 'fastify';
import {
  ADMIN_ACCOUNT_HANDLERS,
  ADMIN_MEMBER_HANDLERS,
  ADMIN_TOKEN_HANDLERS,
} from '../../handlers/admin/index.ts';
import { accountActorOf, principalOf, requireAuth, workspaceActorOf } from '../auth.ts';
import { allowCors, OPERATOR_CORS_SETTING, PLATFORM_HEADERS } from '../cors.ts';
import type { PlatformApiOptions } from '../cors.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { routeOperations } from '../operations.ts';

/**
 * The Admin API, under `/v1/admin`: workspaces, members, bots, keys, the account. Its routes act as a
 * member of the `x-workspace-id` workspace, but for the account's own (a personal access token alone)
 * and introspection (any valid token).
 */
export const adminApi: FastifyPluginAsync<PlatformApiOptions> = async (app, { corsOrigins }) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.admin;
  });
  if (corsOrigins)
    await allowCors(app, {
      origins: () => corsOrigins,
      setIn: OPERATOR_CORS_SETTING,
      allowedHeaders: PLATFORM_HEADERS,
    });
  requireAuth(app, app.domain, 'workspace');
  routeOperations(app, ADMIN_MEMBER_HANDLERS, workspaceActorOf);
  routeOperations(app, ADMIN_ACCOUNT_HANDLERS, accountActorOf, { auth: 'account' });
  routeOperations(app, ADMIN_TOKEN_HANDLERS, principalOf, { auth: 'token' });
};
