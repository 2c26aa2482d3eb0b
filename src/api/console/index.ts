import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from '../../domain/shared/errors.ts';
import { PACKAGE_ROOT } from '../../paths.ts';

/** Where `npm run build:console` (run by `npm ci`) writes the web console: dist/console of the package. */
export const CONSOLE_DIR = path.join(PACKAGE_ROOT, 'dist', 'console');
export const CONSOLE_PATH = '/console/';

const IMMUTABLE = 'public, max-age=31536000, immutable';
/**
 * The console talks to this server only; media of bot messages may come from anywhere on the web. No
 * inline script or style: the built page has none. No plugin, no frame around it, no other base URL.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "object-src 'none'",
  "img-src 'self' data: https: http:",
  "media-src 'self' https: http:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export interface ConsoleOptions {
  /** The built console; default CONSOLE_DIR. */
  root?: string;
}

/**
 * The web console, outside every API: `GET /` leads to it; its bundles (content-hashed names) are
 * cached for good, and every other address under /console/ is its page (it routes in the browser), which
 * is never cached, so a new build is picked up at the next load. None of these routes is in OpenAPI.
 */
export const consoleRoutes: FastifyPluginAsync<ConsoleOptions> = async (app, options) => {
  const root = options.root ?? CONSOLE_DIR;
  const hide = { schema: { hide: true } };

  app.get('/', hide, (_request, reply) => reply.redirect(CONSOLE_PATH));
  app.get('/console', hide, (_request, reply) => reply.redirect(CONSOLE_PATH));

  if (!existsSync(path.join(root, 'index.html'))) {
    app.log.warn({ root }, 'the web console is not built (npm run build:console): /console/ answers 404');
    app.get(`${CONSOLE_PATH}*`, hide, async () => {
      throw new ApiError('ResourceNotFound', 'The web console is not built: run `npm run build:console`');
    });
    return;
  }

  const assets = path.join(root, 'assets');
  await app.register(fastifyStatic, {
    root: assets,
    prefix: `${CONSOLE_PATH}assets/`,
    index: false,
    preCompressed: true,
    cacheControl: false,
    // Only the bundles: the page is sent through the same plugin, and must stay revalidated.
    setHeaders: (reply, file) => {
      if (file.startsWith(assets + path.sep)) reply.header('cache-control', IMMUTABLE);
    },
  });

  const page = (_request: unknown, reply: FastifyReply) =>
    reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .sendFile('index.html', root);
  app.route({ method: ['GET', 'HEAD'], url: CONSOLE_PATH, ...hide, handler: page });
  app.route({ method: ['GET', 'HEAD'], url: `${CONSOLE_PATH}*`, ...hide, handler: page });
};
