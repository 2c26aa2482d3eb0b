import type { FastifyReply, FastifyRequest } from 'fastify';
import { HEADERS } from '../contract/headers.ts';

export function headerValue(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The end user's key of a Chat API request: its `x-user-key` header, or on an event stream (which a
 * browser's EventSource or WebSocket opens without headers) the `x-user-key` query parameter.
 */
export function userKeyOf(request: FastifyRequest): string | undefined {
  const header = headerValue(request.headers[HEADERS.userKey]);
  if (header !== undefined || !request.routeOptions.url?.endsWith('/listen')) return header;
  const query = queryValue(request, HEADERS.userKey);
  return query === '' ? undefined : query;
}

/** A query parameter given once, as text (for routes that read one outside their schema). */
export function queryValue(request: FastifyRequest, name: string): string | undefined {
  const value: unknown =
    typeof request.query === 'object' && request.query !== null
      ? Reflect.get(request.query, name)
      : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Whether a request asks to switch protocols (`Connection: upgrade` and an `Upgrade` header), as Node reads it. */
export function isUpgradeRequest(request: FastifyRequest): boolean {
  const connection = headerValue(request.headers.connection);
  return request.headers.upgrade !== undefined && connection !== undefined && /\bupgrade\b/i.test(connection);
}

/** The token of an `Authorization: Bearer <token>` header, if there is one. */
export function bearerToken(value: string | string[] | undefined): string | undefined {
  const header = headerValue(value);
  const match = header && /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

/**
 * The headers a reply carries so far (CORS among them), for an answer written past Fastify
 * (`reply.hijack()`), which sends them itself.
 */
export function headersOf(reply: FastifyReply): Record<string, string | number | string[]> {
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) headers[name] = value;
  return headers;
}
