import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SETTINGS } from '../config.ts';
import { HEADERS } from '../contract/headers.ts';

/** Origins a browser may call from: any (`*`), or an allow-list (`*` inside it also allows any). */
export type AllowedOrigins = '*' | readonly string[];

/**
 * What browsers send to the chat-facing routes, as the official webchat and chat clients do: the user's
 * key, the webchat's admin secret, and the `timeout` header the webchat puts on its event streams.
 */
export const CHAT_FACING_HEADERS = [
  'content-type',
  HEADERS.userKey,
  HEADERS.adminSecret,
  'timeout',
  'last-event-id',
  'cache-control',
] as const;

/**
 * What a browser sends to a signed upload URL (the webchat's file upload, to the Files API): `PUT` with
 * the file's content type and the `x-amz-tagging` header. The file content routes answer their own
 * preflights, for any origin (`api/files/content.ts`).
 */
export const UPLOAD_HEADERS = ['content-type', 'x-amz-tagging'] as const;

/** What the official clients send to the Admin, Runtime, Files and Tables APIs. */
export const PLATFORM_HEADERS = [
  'content-type',
  HEADERS.authorization,
  HEADERS.workspaceId,
  HEADERS.botId,
  HEADERS.integrationId,
  HEADERS.integrationAlias,
  HEADERS.integrationName,
  HEADERS.userId,
  HEADERS.userRole,
  HEADERS.multipleIntegrations,
  HEADERS.destinationBotId,
] as const;

/**
 * On an answer to a browser's origin that is not allowed: why its page cannot read the answer, and where
 * the list is set. The browser hides the answer from the page and says only that a CORS header is
 * missing; this header shows in its developer tools.
 */
export const CORS_REFUSED_HEADER = 'x-parley-cors-refused';

/** Where the chat-facing routes' allow-list is set. */
export const BOT_CORS_SETTING =
  "the bot's integrations.chat.configuration.allowedOrigins (the console's Publish tab)";
/** Where the platform APIs' allow-list is set. */
export const OPERATOR_CORS_SETTING = `the server setting ${SETTINGS.corsOrigins.env}`;

export interface CorsOptions {
  /** The origins allowed for this request (the allow-list of the bot its path names, say). */
  origins(request: FastifyRequest): AllowedOrigins | Promise<AllowedOrigins>;
  /** Where the allow-list is set, for CORS_REFUSED_HEADER (e.g. the bot's allowedOrigins). */
  setIn: string;
  /** Request headers a browser may send; default: the chat-facing ones. */
  allowedHeaders?: readonly string[];
  /** Default: GET, HEAD, POST, PUT, DELETE. */
  methods?: readonly string[];
}

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Answers CORS on every route of the (encapsulated) plugin it is registered in: preflights (`OPTIONS`)
 * answered before any authentication, and `Access-Control-Allow-Origin` on every answer, event streams
 * included (their writers copy the reply's headers). An origin not allowed gets no CORS header at all,
 * so its browser keeps the answer from the page. No credentials: keys travel in headers, not cookies.
 *
 * Registered once per API: the Chat and webchat APIs with each bot's allow-list, the Admin and Runtime
 * APIs with the operator's setting; the Files API's upload URL can do the same with its file's bot.
 */
export async function allowCors(app: FastifyInstance, options: CorsOptions): Promise<void> {
  const allowedHeaders = [...(options.allowedHeaders ?? CHAT_FACING_HEADERS)];
  const methods = [...(options.methods ?? ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'])];
  // Before the plugin's hook, which answers preflights: the header goes on those too.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const allowed = await options.origins(request);
    if (allowed === '*' || allowed.includes('*') || allowed.includes(origin)) return;
    // The origin is the browser's, echoed only when it is plain text a header may carry.
    const named = /^[\x21-\x7e]{1,300}$/.test(origin) ? origin : 'this origin';
    reply.header(CORS_REFUSED_HEADER, `${named} is not an allowed origin: see ${options.setIn}`);
  });
  await app.register(cors, {
    delegator: async (request: FastifyRequest) => {
      const allowed = await options.origins(request);
      return {
        origin: allowed === '*' || allowed.includes('*') ? '*' : [...allowed],
        methods,
        allowedHeaders,
        maxAge: PREFLIGHT_MAX_AGE_S,
        strictPreflight: false,
      };
    },
  });
  // The plugin's own preflight route is `{prefix}*`, which after a parametric prefix (`/chat/:webhookId`)
  // matches nothing below it: this one does. Its hook answers preflights before the handler runs.
  app.options('/*', { schema: { hide: true } }, (_request, reply) => reply.callNotFound());
}

/** Options of an API that browsers reach only from the origins the operator allows (PARLEY_CORS_ORIGINS). */
export interface PlatformApiOptions {
  /** Undefined: the API sends no CORS header at all. */
  corsOrigins?: readonly string[] | undefined;
}
