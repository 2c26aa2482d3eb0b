/**
 * `fetch` in Parley bots' code: the request is made here, by the host, never by the sandbox (which has no
 * network). Every connection, redirects included, goes through the bots' address policy, checked on the
 * address actually connected to (`checkedLookup`): the public internet when the operator allows it, and
 * the private targets the operator lists. What bot code sends and reads is bounded in size and time.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Json, JsonObject } from './sandbox/types.ts';
import { botTargetRule, checkedLookup } from '../domain/shared/public-lookup.ts';
import type { BotTargets } from '../domain/shared/public-lookup.ts';

/** The settings of Parley bots' `fetch`, named in what a refusal says. */
const BOT_FETCH_SETTINGS = { internet: 'PARLEY_BOT_FETCH', allowed: 'PARLEY_BOT_FETCH_PRIVATE_TARGETS' };

/** The bounds of one `fetch`: what a bot may send and read, and for how long. */
export const BOT_FETCH_LIMITS = {
  requestBytes: 1024 * 1024,
  responseBytes: 5 * 1024 * 1024,
  timeoutMs: 10_000,
  redirects: 5,
  /** Requests one call of bot code may have in flight at once. */
  inFlightPerCall: 8,
} as const;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Headers the host sets itself: bot code's values would lie about the body or reuse the connection. */
const HOST_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** What bot code asked for, checked. */
interface FetchRequest {
  url: URL;
  method: string;
  headers: [string, string][];
  body: Buffer | undefined;
}

/** A refusal or failure, as bot code sees it: a TypeError's message, as the standard `fetch` throws. */
export class FetchFailure extends Error {}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requestOf(value: Json): FetchRequest {
  if (!isObject(value) || typeof value.url !== 'string') throw new FetchFailure('fetch needs a URL');
  let url: URL;
  try {
    url = new URL(value.url);
  } catch {
    throw new FetchFailure(`fetch: ${value.url} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FetchFailure(`fetch: only http and https URLs may be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new FetchFailure('fetch: a URL may not carry credentials');
  const method = typeof value.method === 'string' ? value.method.toUpperCase() : 'GET';
  if (!METHODS.has(method)) throw new FetchFailure(`fetch: ${method} is not a method fetch may use`);
  const headers: [string, string][] = [];
  for (const pair of Array.isArray(value.headers) ? value.headers : []) {
    const [name, text] = Array.isArray(pair) ? pair : [];
    if (typeof name !== 'string' || typeof text !== 'string' || !TOKEN.test(name) || !HEADER_VALUE.test(text))
      throw new FetchFailure(`fetch: the header ${JSON.stringify(name)} is not a valid header`);
    if (!HOST_HEADERS.has(name.toLowerCase())) headers.push([name, text]);
  }
  let body: Buffer | undefined;
  if (typeof value.text === 'string') body = Buffer.from(value.text, 'utf8');
  else if (typeof value.base64 === 'string') body = Buffer.from(value.base64, 'base64');
  if (body && (method === 'GET' || method === 'HEAD'))
    throw new FetchFailure(`fetch: a ${method} request cannot have a body`);
  if (body && body.length > BOT_FETCH_LIMITS.requestBytes)
    throw new FetchFailure(`fetch: the body is larger than ${BOT_FETCH_LIMITS.requestBytes} bytes`);
  return { url, method, headers, body };
}

/** The request's headers as Node sends them (a name given twice has both values), with its length. */
function headerObject(request: FetchRequest): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of request.headers) {
    const key = name.toLowerCase();
    const earlier = headers[key];
    headers[key] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
  }
  if (request.body) headers['content-length'] = String(request.body.length);
  return headers;
}

/** The answer bot code's `Response` is made from. */
function answerOf(
  response: http.IncomingMessage,
  url: URL,
  body: Buffer,
  redirected: boolean,
  startedAt: number,
): JsonObject {
  const headers: Json[] = [];
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
    headers.push([(response.rawHeaders[i] ?? '').toLowerCase(), response.rawHeaders[i + 1] ?? '']);
  let whole = true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    whole = false;
  }
  return {
    status: response.statusCode ?? 0,
    statusText: response.statusMessage ?? '',
    url: url.href,
    redirected,
    headers,
    // `text()` reads what a browser would (invalid sequences replaced); the bytes go as well when they
    // are not UTF-8, for `arrayBuffer()`.
    text: body.toString('utf8'),
    ...(!whole && { base64: body.toString('base64') }),
    durationMs: Math.round(performance.now() - startedAt),
  };
}

export class BotFetch {
  constructor(private readonly policy: BotTargets) {}

  /**
   * A `fetch` of bot code, `inFlight` counting its call's requests (at most `inFlightPerCall` at once).
   * Rejects with a FetchFailure that bot code sees as its error.
   */
  async fetch(request: Json, inFlight: { count: number }): Promise<JsonObject> {
    if (inFlight.count >= BOT_FETCH_LIMITS.inFlightPerCall)
      throw new FetchFailure(
        `fetch: at most ${BOT_FETCH_LIMITS.inFlightPerCall} requests of one call may be in flight at once`,
      );
    inFlight.count++;
    try {
      return await this.follow(requestOf(request), performance.now() + BOT_FETCH_LIMITS.timeoutMs);
    } finally {
      inFlight.count--;
    }
  }

  private async follow(first: FetchRequest, deadline: number): Promise<JsonObject> {
    const startedAt = performance.now();
    let request = first;
    for (let hop = 0; ; hop++) {
      const { response, body } = await this.exchange(request, deadline);
      const location = response.headers.location;
      const status = response.statusCode ?? 0;
      if (status < 300 || status > 399 || status === 304 || location === undefined)
        return answerOf(response, request.url, body, hop > 0, startedAt);
      if (hop >= BOT_FETCH_LIMITS.redirects)
        throw new FetchFailure(`fetch: more than ${BOT_FETCH_LIMITS.redirects} redirects`);
      let next: URL;
      try {
        next = new URL(location, request.url);
      } catch {
        throw new FetchFailure(`fetch: the redirect to ${location} is not a URL`);
      }
      // As browsers do: 303, and 301/302 after a POST, go on as a GET without the body.
      const asGet = status === 303 || ((status === 301 || status === 302) && request.method === 'POST');
      const sameOrigin = next.origin === request.url.origin;
      request = requestOf({
        url: next.href,
        method: asGet ? 'GET' : request.method,
        // Credentials are not carried to another origin.
        headers: request.headers.filter(
          ([name]) => sameOrigin || !['authorization', 'cookie'].includes(name.toLowerCase()),
        ),
        ...(!asGet && request.body && { base64: request.body.toString('base64') }),
      });
    }
  }

  /** One request and its whole (bounded) answer. */
  private exchange(
    request: FetchRequest,
    deadline: number,
  ): Promise<{ response: http.IncomingMessage; body: Buffer }> {
    const host = request.url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(request.url.port) || (request.url.protocol === 'https:' ? 443 : 80);
    const rule = botTargetRule(this.policy, port, BOT_FETCH_SETTINGS);
    // A literal address is connected to without a lookup: it is checked here, with its port.
    if (net.isIP(host) !== 0) {
      const refused = rule(host);
      if (refused !== undefined) return Promise.reject(new FetchFailure(`fetch: ${host} is ${refused}`));
    }
    const left = deadline - performance.now();
    if (left <= 0) return Promise.reject(new FetchFailure(this.timedOut()));
    return new Promise((resolve, reject) => {
      const outgoing = (request.url.protocol === 'https:' ? https : http).request(request.url, {
        method: request.method,
        headers: headerObject(request),
        // A connection of its own: a kept-alive one could have been made to another address.
        agent: false,
        lookup: checkedLookup(rule),
      });
      const timer = setTimeout(() => outgoing.destroy(new FetchFailure(this.timedOut())), left);
      outgoing.on('close', () => clearTimeout(timer));
      outgoing.on('error', (err) =>
        reject(err instanceof FetchFailure ? err : new FetchFailure(`fetch: ${err.message}`)),
      );
      outgoing.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > BOT_FETCH_LIMITS.responseBytes) {
            outgoing.destroy(
              new FetchFailure(`fetch: the answer is larger than ${BOT_FETCH_LIMITS.responseBytes} bytes`),
            );
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve({ response, body: Buffer.concat(chunks) }));
        response.on('error', (err) =>
          reject(err instanceof FetchFailure ? err : new FetchFailure(`fetch: ${err.message}`)),
        );
      });
      outgoing.end(request.body);
    });
  }

  private timedOut(): string {
    return `fetch: no answer within ${BOT_FETCH_LIMITS.timeoutMs / 1000} s`;
  }
}
