import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiError, unlessMissing } from '../../domain/shared/errors.ts';
import { headerValue } from '../headers.ts';
import { webchatConfiguration } from './configuration.ts';
import { PACKAGE_ROOT } from '../../paths.ts';
import { INJECT_SCRIPT, SHARE_PATH, WEBCHAT_ASSETS_PATH } from '../../contract/webchat/pages.ts';

/** Where `npm run build:webchat` (run by `npm ci`) writes the webchat's assets. */
export const WEBCHAT_DIR = path.join(PACKAGE_ROOT, 'dist', 'webchat');
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The embed script keeps its address across builds: pages pick up a new one within minutes. */
const INJECT_CACHE = 'public, max-age=300';

interface Manifest {
  page: { script: string; stylesheet: string };
  inject: string;
}

export interface WebchatAssetsOptions {
  /** The built assets; default WEBCHAT_DIR. */
  root?: string;
}

const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='4' fill='%232f5bd3'/%3E%3Cpath d='M4 5h8v5H7l-3 2z' fill='white'/%3E%3C/svg%3E";
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON inside a script element: `<` escaped, so no text in it can end the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

function pageHtml(manifest: Manifest, config: ReturnType<typeof webchatConfiguration>): string {
  const asset = (file: string) => `${WEBCHAT_ASSETS_PATH}${file}`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <title>${escapeHtml(config.configuration.botName)}</title>
    <link rel="icon" href="${FAVICON}" />
    <link rel="stylesheet" href="${asset(manifest.page.stylesheet)}" />
    <script type="application/json" id="parley-webchat-configuration">${scriptJson(config)}</script>
    <script type="module" src="${asset(manifest.page.script)}"></script>
  </head>
  <body>
    <div id="root"></div>
    <noscript>This chat needs JavaScript.</noscript>
  </body>
</html>
`;
}

/**
 * The page may be framed only by the origins the bot allows (the embed script frames it), talks to this
 * server only (and its content origin, where uploads go), and shows media of bot messages from
 * anywhere. The webchat styles itself with inline style elements; its script is its bundle only.
 */
function contentSecurityPolicy(
  allowedOrigins: readonly string[] | undefined,
  contentUrl: string | undefined,
): string {
  const ancestors =
    !allowedOrigins || allowedOrigins.includes('*') ? '*' : allowedOrigins.join(' ') || "'none'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "object-src 'none'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: https: http:",
    "media-src 'self' data: blob: https: http:",
    "font-src 'self' data:",
    `connect-src 'self'${contentUrl === undefined ? '' : ` ${contentUrl}`}`,
    `frame-ancestors ${ancestors}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * The origin of the page that frames this request, when the browser says both that it is a frame's
 * (`Sec-Fetch-Dest`) and where it comes from (`Referer`, an origin at least unless the page withholds it).
 */
function framingOrigin(request: FastifyRequest): string | undefined {
  if (headerValue(request.headers['sec-fetch-dest']) !== 'iframe') return undefined;
  const referer = headerValue(request.headers.referer);
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/**
 * The origin of the page framing the share page, when the bot's allow-list leaves it out: the browser
 * would refuse the page there (`frame-ancestors`) and show an empty grey frame, so the frame is told
 * why instead. Undefined when the frame may show the chat, or when the browser does not say who frames it
 * (then the policy alone decides).
 */
function refusedFrame(
  request: FastifyRequest,
  allowedOrigins: readonly string[] | undefined,
): string | undefined {
  if (!allowedOrigins || allowedOrigins.includes('*')) return undefined;
  const origin = framingOrigin(request);
  return origin !== undefined && !allowedOrigins.includes(origin) ? origin : undefined;
}

/** What a frame on a page the bot does not allow shows: text only, nothing to run or load. */
const refusedFrameHtml = (origin: string) =>
  `<!doctype html><meta charset="utf-8"><title>Not allowed here</title>
<body style="font:15px/1.5 system-ui,sans-serif;margin:0;padding:1.25rem;color:#1c2330;background:#fff4e5;overflow-wrap:anywhere">
<p><strong>This chat cannot be shown on ${escapeHtml(origin)}.</strong></p>
<p>The bot allows its chat only on the websites listed in its allowed origins, and this one is not among them.
Its owner can add <code>${escapeHtml(origin)}</code> in the console (the bot's Publish screen), or to
<code>integrations.chat.configuration.allowedOrigins</code>.</p>
</body>
`;
/** Text, no script; any page may frame it (it says only that it may not show the chat). */
const REFUSED_FRAME_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/** The share page of a chat that is not there: text, nothing to run or load. */
const NOT_FOUND_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'";

/**
 * The webchat's browser side, outside every API: the embed script, the hashed bundles of the webchat
 * page (immutable), and the share page of each bot's channel (never cached: it names the current
 * bundles and the bot's current look). Hidden from OpenAPI.
 */
export const webchatAssets: FastifyPluginAsync<WebchatAssetsOptions> = async (app, options) => {
  const root = options.root ?? WEBCHAT_DIR;
  const hide = { schema: { hide: true } };
  const manifestFile = path.join(root, 'manifest.json');
  if (!existsSync(manifestFile)) {
    app.log.warn(
      { root },
      'the webchat is not built (npm run build:webchat): its embed script and pages answer 404',
    );
    const notBuilt = async () => {
      throw new ApiError('ResourceNotFound', 'The webchat is not built: run `npm run build:webchat`');
    };
    app.get(`${WEBCHAT_ASSETS_PATH}*`, hide, notBuilt);
    app.get(`${SHARE_PATH}:clientId`, hide, notBuilt);
    return;
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;

  await app.register(fastifyStatic, {
    root,
    prefix: WEBCHAT_ASSETS_PATH,
    index: false,
    preCompressed: true,
    cacheControl: false,
    allowedPath: (pathName) => pathName === `/${INJECT_SCRIPT}` || pathName.startsWith('/assets/'),
    setHeaders: (reply, file) => {
      // `file` is the copy sent: inject.js, or its .br or .gz.
      const inject =
        path.dirname(file) === path.resolve(root) && path.basename(file).startsWith(INJECT_SCRIPT);
      reply.header('cache-control', inject ? INJECT_CACHE : IMMUTABLE);
      reply.header('x-content-type-options', 'nosniff');
    },
  });

  const { webchat } = app.domain;
  app.withTypeProvider<TypeBoxTypeProvider>().route({
    method: ['GET', 'HEAD'],
    url: `${SHARE_PATH}:clientId`,
    schema: { hide: true, params: Type.Object({ clientId: Type.String() }) },
    handler: async (request, reply) => {
      const scope = await unlessMissing(webchat.scope(request.params.clientId));
      if (!scope) {
        return reply
          .code(404)
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-cache')
          .header('content-security-policy', NOT_FOUND_POLICY)
          .header('x-content-type-options', 'nosniff')
          .send(
            '<!doctype html><meta charset="utf-8"><title>Not found</title><p>This chat is not available.</p>\n',
          );
      }
      const refusedOrigin = refusedFrame(request, scope.channel.allowedOrigins);
      if (refusedOrigin !== undefined) {
        return reply
          .code(403)
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-cache')
          .header('content-security-policy', REFUSED_FRAME_POLICY)
          .header('x-content-type-options', 'nosniff')
          .header('vary', 'sec-fetch-dest, referer')
          .send(refusedFrameHtml(refusedOrigin));
      }
      return (
        reply
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-cache')
          .header(
            'content-security-policy',
            contentSecurityPolicy(scope.channel.allowedOrigins, app.domain.links.contentUrl),
          )
          .header('x-content-type-options', 'nosniff')
          .header('referrer-policy', 'no-referrer')
          // Who frames the page decides between it and the notice of refusedFrame.
          .header('vary', 'sec-fetch-dest, referer')
          .send(pageHtml(manifest, webchatConfiguration(scope, webchat.uploadsAvailable)))
      );
    },
  });
};
