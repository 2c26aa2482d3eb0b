import type { FastifyInstance, RouteOptions } from 'fastify';
import { HEADERS } from '../contract/headers.ts';
import { SIGNATURE_HEADERS } from '../domain/webhooks/signatures.ts';

/**
 * How each API authenticates, as OpenAPI security schemes: the bearer token, and the headers that go
 * with it (`x-workspace-id`, `x-bot-id`) or replace it (`x-user-key`, `x-admin-secret`). Declared so
 * that the description documents them and /docs's "Authorize" sends them on "Try it out".
 */
export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'A personal access token (Admin API) or a bot API key (Runtime API)',
  },
  workspaceId: {
    type: 'apiKey',
    in: 'header',
    name: HEADERS.workspaceId,
    description: 'The workspace the Admin API acts in (`wkspace_…`)',
  },
  botId: {
    type: 'apiKey',
    in: 'header',
    name: HEADERS.botId,
    description: 'The bot the Runtime API acts as (`bot_…`)',
  },
  userKey: {
    type: 'apiKey',
    in: 'header',
    name: HEADERS.userKey,
    description: 'An end user’s key on the Chat and webchat APIs (the `key` createUser answers)',
  },
  adminSecret: {
    type: 'apiKey',
    in: 'header',
    name: HEADERS.adminSecret,
    description: 'A webchat channel’s admin secret: its encryption key (personal mode)',
  },
  webhookSignature: {
    type: 'apiKey',
    in: 'header',
    name: SIGNATURE_HEADERS.signature,
    description:
      'A Standard Webhooks signature made with the bot’s signing secret, with `webhook-id` and `webhook-timestamp` (not needed when the webhook’s verification is `none`)',
  },
} as const;

type Scheme = keyof typeof SECURITY_SCHEMES;
/** Alternatives (any one), each a set of schemes that go together; `{}` among them: none needed. */
export type Security = Partial<Record<Scheme, string[]>>[];

/** Documents the security of every route added to `app` (unless the route says its own). */
export function documentSecurity(app: FastifyInstance, securityOf: (route: RouteOptions) => Security): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (!schema || schema.hide === true || schema.security !== undefined) return;
    schema.security = securityOf(route);
  });
}
