import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Links } from '../../domain/bots/links.ts';
import { CONTENT_PREFIX } from '../../domain/files/files.ts';
import { ApiError } from '../../domain/shared/errors.ts';

/**
 * Whether a request came to the content origin (PARLEY_CONTENT_URL). A browser sends the host of the
 * URL it follows, so a page cannot make a request to the main origin look like one to the content
 * origin; a proxy in front must pass the Host header on (one that rewrites it makes every request look
 * like the main origin's: no content is then shown inline).
 */
export function isOnContentOrigin(links: Links, request: FastifyRequest): boolean {
  return links.contentUrl !== undefined && request.host.toLowerCase() === new URL(links.contentUrl).host;
}

/** Every request to the content origin answers 404 but those of file contents: no page of Parley's is served there. */
export function contentOriginServesContentOnly(app: FastifyInstance, links: Links): void {
  app.addHook('onRequest', async (request) => {
    if (!isOnContentOrigin(links, request)) return;
    const path = request.url.replace(/^\/+/, '/');
    if (path.startsWith(`${CONTENT_PREFIX}/`)) return;
    throw new ApiError('ResourceNotFound', 'This origin serves file contents only');
  });
}
