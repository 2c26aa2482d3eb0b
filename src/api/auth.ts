import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BotActor, Principal, WorkspaceActor } from '../domain/actors.ts';
import type { Domain } from '../domain/index.ts';
import { ApiError, unauthorized } from '../domain/errors.ts';
import { bearerToken, headerValue, HEADERS } from './headers.ts';

/**
 * How a route authenticates:
 * - `account`: a personal access token, no workspace (account routes, workspace routes with an id);
 * - `workspace`: a personal access token plus `x-workspace-id` of a workspace the account is a member of;
 * - `bot`: a bot API key (or a member's personal token) plus `x-bot-id`;
 * - `token`: any valid token (introspection).
 */
export type AuthMode = 'account' | 'workspace' | 'bot' | 'token';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principal?: Principal;
    workspaceActor?: WorkspaceActor;
    botActor?: BotActor;
  }
}

/** Authenticates every route of the instance it is installed on, by the route's `config.auth`. */
export function installAuth(app: FastifyInstance, domain: Domain): void {
  app.decorateRequest('principal', undefined);
  app.decorateRequest('workspaceActor', undefined);
  app.decorateRequest('botActor', undefined);
  app.addHook('onRequest', async (request) => {
    const mode = request.routeOptions.config.auth;
    if (!mode) return;
    const token = bearerToken(request.headers[HEADERS.authorization]);
    if (!token) throw unauthorized('An Authorization: Bearer <token> header is required');
    const principal = await domain.auth.authenticate(token);
    if (!principal) throw unauthorized('The token is invalid or has been revoked');
    request.principal = principal;
    if (mode === 'account' && principal.kind !== 'account') {
      throw unauthorized('This operation needs a personal access token');
    }
    if (mode === 'workspace') {
      request.workspaceActor = await domain.auth.workspaceActor(
        principal,
        headerValue(request.headers[HEADERS.workspaceId]),
      );
    }
    if (mode === 'bot') {
      request.botActor = await domain.auth.botActor(principal, headerValue(request.headers[HEADERS.botId]));
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
