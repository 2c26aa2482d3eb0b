import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountActor, BotActor, Principal, WorkspaceActor } from '../domain/workspace/actors.ts';
import { HEADERS } from '../contract/headers.ts';
import type { Domain } from '../domain/index.ts';
import { unauthorized } from '../domain/shared/errors.ts';
import { unavailable } from './errors.ts';
import { bearerToken, headerValue } from './headers.ts';
import { documentSecurity } from './openapi-security.ts';
import type { Security } from './openapi-security.ts';

/**
 * How a route authenticates:
 * - `account`: a personal access token, no workspace (account routes, workspace routes with an id);
 * - `workspace`: a personal access token plus `x-workspace-id` of a workspace the account is a member of;
 * - `bot`: a bot API key (or a member's personal token) plus `x-bot-id`;
 * - `token`: any valid token (introspection);
 * - `public`: none (documented as such).
 */
export type AuthMode = 'account' | 'workspace' | 'bot' | 'token' | 'public';

/** What the Admin and Runtime APIs' authentication modes ask for, as OpenAPI security. */
const SECURITY_OF_MODE: Record<AuthMode, Security> = {
  public: [],
  token: [{ bearer: [] }],
  account: [{ bearer: [] }],
  workspace: [{ bearer: [], workspaceId: [] }],
  bot: [{ bearer: [], botId: [] }],
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Overrides the authentication its API requires by default. */
    auth?: AuthMode;
    /** A workspace route that a bot's own key may call for that bot (`OperationSpec.botItself`). */
    botItself?: boolean;
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
      request.workspaceActor =
        principal.kind === 'botKey' && request.routeOptions.config.botItself
          ? domain.auth.botItself(principal, pathId(request.params))
          : await domain.auth.workspaceActor(principal, headerValue(request.headers[HEADERS.workspaceId]));
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

/** The `id` path parameter of a route, if it has one. */
function pathId(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || !('id' in params)) return undefined;
  return typeof params.id === 'string' ? params.id : undefined;
}

export const principalOf = (r: FastifyRequest): Principal => r.principal ?? unavailable('principal');
export const accountActorOf = (r: FastifyRequest): AccountActor => {
  const p = principalOf(r);
  return p.kind === 'account' ? { accountId: p.accountId } : unavailable('account');
};
export const workspaceActorOf = (r: FastifyRequest): WorkspaceActor =>
  r.workspaceActor ?? unavailable('workspace actor');
export const botActorOf = (r: FastifyRequest): BotActor => r.botActor ?? unavailable('bot actor');
