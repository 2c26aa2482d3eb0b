import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BotActor, Principal, WorkspaceActor } from '../domain/workspace/actors.ts';
import type { Domain } from '../domain/index.ts';
import { ApiError, unauthorized } from '../domain/shared/errors.ts';
import { bearerToken, headerValue, HEADERS } from './headers.ts';
import { documentSecurity, SECURITY_OF_MODE } from './openapi-security.ts';

/**
 * How a route authenticates:
 * - `account`: a personal access token, no workspace (account routes, workspace routes with an id);
 * - `workspace`: a personal access token plus `x-workspace-id` of a workspace the account is a member of;
 * - `bot`: a bot API key (or a member's personal token) plus `x-bot-id`;
 * - `token`: any valid token (introspection);
 * - `public`: none (documented as such).
 */
export type AuthMode = 'account' | 'workspace' | 'bot' | 'token' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Overrides the authentication its API requires by default. */
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principal?: Principal;
    workspaceActor?: WorkspaceActor;
    botActor?: BotActor;
  }
}

/**
 * Authenticates every route of the API (the encapsulated plugin) it is installed in: `mode` unless a
 * route's `config.auth` says otherwise. A route is public only by saying so.
 */
export function requireAuth(app: FastifyInstance, domain: Domain, mode: Exclude<AuthMode, 'public'>): void {
  if (!app.hasRequestDecorator('principal')) {
    app.decorateRequest('principal', undefined);
    app.decorateRequest('workspaceActor', undefined);
    app.decorateRequest('botActor', undefined);
  }
  documentSecurity(app, (route) => SECURITY_OF_MODE[route.config?.auth ?? mode]);
  app.addHook('onRequest', async (request) => {
    const routeMode = request.routeOptions.config.auth ?? mode;
    if (routeMode === 'public') return;
    const token = bearerToken(request.headers[HEADERS.authorization]);
    if (!token) throw unauthorized('An Authorization: Bearer <token> header is required');
    const principal = await domain.auth.authenticate(token);
    if (!principal) throw unauthorized('The token is invalid or has been revoked');
    request.principal = principal;
    if (routeMode === 'account' && principal.kind !== 'account') {
      throw unauthorized('This operation needs a personal access token');
    }
    if (routeMode === 'workspace') {
      request.workspaceActor = await domain.auth.workspaceActor(
        principal,
        headerValue(request.headers[HEADERS.workspaceId]),
      );
    }
    if (routeMode === 'bot') {
      const actor = await domain.auth.botActor(principal, headerValue(request.headers[HEADERS.botId]));
      domain.auth.requireAccess(actor, request.routeOptions.config.access ?? 'write');
      // An integration's own key says which integration it is; a header cannot make it another.
      const integration = actor.integration ?? headerValue(request.headers[HEADERS.integrationAlias]);
      request.botActor = integration === undefined ? actor : { ...actor, integration };
    }
  });
}

function missing(what: string): never {
  // A route reads an actor its auth mode does not provide: a programming error, not a client's.
  throw new ApiError('Internal', `${what} is not available on this route`);
}

export const principalOf = (r: FastifyRequest): Principal => r.principal ?? missing('principal');
export const accountIdOf = (r: FastifyRequest): string => {
  const p = principalOf(r);
  return p.kind === 'account' ? p.accountId : missing('account');
};
export const workspaceActorOf = (r: FastifyRequest): WorkspaceActor =>
  r.workspaceActor ?? missing('workspace actor');
export const botActorOf = (r: FastifyRequest): BotActor => r.botActor ?? missing('bot actor');
