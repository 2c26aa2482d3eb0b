import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../../contract/models.ts';
import { DEFAULT_CONTENT_TYPE, INLINE_MEDIA_TYPES, mediaType } from '../../domain/files/content-types.ts';
import type { Downloadable } from '../../domain/files/contents.ts';
import { Text } from '../../domain/files/schemas.ts';
import { ApiError } from '../../domain/shared/errors.ts';
import { requireAuth } from '../auth.ts';
import { UPLOAD_HEADERS } from '../cors.ts';
import { headerValue } from '../headers.ts';
import { isOnContentOrigin } from './content-origin.ts';

const tags = ['File contents'];
const FileIdParams = Type.Object({ id: Text() });
const SignatureQuery = Type.Object({
  expires: Type.Optional(Type.String({ description: 'Seconds since the epoch' })),
  signature: Type.Optional(Type.String()),
});

/**
 * The policy of every answer of these routes: what a browser shows of a file runs no script and loads
 * nothing, and is an opaque origin (no storage, no cookies, no access to any window of Parley's).
 */
const CONTENT_SECURITY_POLICY = "sandbox; default-src 'none'";

/**
 * Whether a browser may show a content rather than save it: on the content origin, any declared type;
 * on Parley's own origin, only the types that cannot run script there. Bytes of unknown type are saved.
 */
function showsInline(contentType: string, onContentOrigin: boolean): boolean {
  if (contentType === DEFAULT_CONTENT_TYPE) return false;
  return onContentOrigin || INLINE_MEDIA_TYPES.has(mediaType(contentType));
}

/** `filename*` of RFC 6266 (RFC 8187 encoding: its attr-chars, every other byte percent-encoded). */
function dispositionFileName(name: string): string {
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `filename*=UTF-8''${encoded}`;
}

/** A byte range of an HTTP `Range` header: one range of bytes (several are answered whole, as HTTP allows). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'whole' | 'unsatisfiable' {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return 'whole';
  const [, from = '', to = ''] = match;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(size - suffix, 0), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  content: Downloadable,
  cache: string,
  onContentOrigin: boolean,
) {
  const etag = `"${content.etag}"`;
  const disposition = showsInline(content.contentType, onContentOrigin) ? 'inline' : 'attachment';
  reply
    .header('etag', etag)
    .header('accept-ranges', 'bytes')
    .header('cache-control', cache)
    .header('content-disposition', `${disposition}; ${dispositionFileName(content.fileName)}`);
  if (headerValue(request.headers['if-none-match']) === etag) return reply.code(304).send();
  const range = parseRange(headerValue(request.headers.range), content.size);
  if (range === 'unsatisfiable') {
    // 416 has no error type of its own: the body says InvalidPayload, the status what HTTP says.
    const error = new ApiError('InvalidPayload', `The range is outside the content's ${content.size} bytes`);
    return reply
      .code(416)
      .header('content-range', `bytes */${content.size}`)
      .send({ ...error.toBody(), code: 416 });
  }
  reply.header('content-type', content.contentType);
  if (range === 'whole') {
    reply.header('content-length', content.size);
    return reply.code(200).send(content.size === 0 ? '' : content.read());
  }
  reply
    .header('content-range', `bytes ${range.start}-${range.end}/${content.size}`)
    .header('content-length', range.end - range.start + 1);
  return reply.code(206).send(content.read(range));
}

/**
 * What cannot be a JSON operation: a file's content in (the PUT to its signed `uploadUrl`) and out
 * (its signed `url`, or the permanent one of `public_content` files). These routes authenticate by
 * the URL's signature, not by a token; browsers may call them from any origin.
 *
 * What users upload must never run as a page of Parley's origin, where the console keeps its token and
 * the webchat its users' keys: every answer is `nosniff` and sandboxed, and only types that cannot run
 * script are shown inline. With a content origin (PARLEY_CONTENT_URL), downloads are served there only
 * (the main origin redirects to it) and any type may be shown inline, still sandboxed.
 */
export const fileContentRoutes: FastifyPluginAsync = async (app) => {
  requireAuth(app, app.domain, 'bot');
  const { links } = app.domain;
  // The upload is raw bytes of any type (JSON included, never parsed), streamed to storage as it arrives.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  app.addHook('onRequest', async (request, reply) => {
    reply
      .header('access-control-allow-origin', '*')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', CONTENT_SECURITY_POLICY);
    // Uploads are taken on either origin (a URL handed out before the setting keeps working); what is
    // read goes to the content origin, so that the main origin serves no byte a user chose.
    const reads = request.method === 'GET' || request.method === 'HEAD';
    if (reads && links.contentUrl !== undefined && !isOnContentOrigin(links, request)) {
      return reply.redirect(`${links.contentUrl}${request.url}`, 307);
    }
    return undefined;
  });
  app.addHook('onError', async (request, reply, error) => {
    // An upload refused before its body was read: the rest of it is not read either.
    if (request.method === 'PUT' && error instanceof ApiError) reply.header('connection', 'close');
  });

  app.options('/*', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('access-control-allow-methods', 'GET, HEAD, PUT')
      .header('access-control-allow-headers', UPLOAD_HEADERS.join(', '))
      .header('access-control-max-age', '86400')
      .code(204)
      .send(),
  );

  app.put(
    '/:id/upload',
    {
      // A large file from a slow client may take minutes: the minimum rate bounds it, not a total time.
      config: { auth: 'public', longBody: true },
      schema: {
        tags,
        operationId: 'uploadFileContent',
        summary: 'Upload a file’s content (the file’s signed `uploadUrl`)',
        description:
          'The raw bytes, of any content type, exactly as many as the upsert declared; streamed to storage. An expired, altered or already used URL answers 403 and stores nothing: an upload URL stores one content (a failed upload may be retried).',
        params: FileIdParams,
        querystring: SignatureQuery,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const length = headerValue(request.headers['content-length']);
      const { etag } = await app.domain.fileContents.receive(
        id,
        request.query as { expires?: string; signature?: string },
        length === undefined || !/^\d+$/.test(length) ? undefined : Number(length),
        request.raw,
      );
      return reply.header('etag', `"${etag}"`).code(200).send();
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'downloadFileContent',
        summary: 'Download a file’s content (the file’s signed `url`)',
        description:
          'Range requests, ETag and If-None-Match are supported. Answers are nosniff and sandboxed (CSP), and attachments unless an image (not SVG), PDF, plain text, audio or video; on the content origin (PARLEY_CONTENT_URL) any declared type is inline. A link made before the file was upserted again answers 403.',
        params: FileIdParams,
        querystring: SignatureQuery,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const content = await app.domain.fileContents.download(
        id,
        request.query as { expires?: string; signature?: string },
      );
      return send(request, reply, content, 'private, max-age=300', isOnContentOrigin(links, request));
    },
  );

  app.get(
    '/public/:id',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'downloadPublicFileContent',
        summary: 'Download the content of a file with the `public_content` policy (its permanent `url`)',
        params: FileIdParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const content = await app.domain.fileContents.downloadPublic(id);
      return send(request, reply, content, 'public, max-age=300', isOnContentOrigin(links, request));
    },
  );
};
