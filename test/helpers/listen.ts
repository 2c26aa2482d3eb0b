import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { openSse, signalOf, waitFor } from './sse.ts';
import type { SseSignal, SseStream } from './sse.ts';

/** The two ways a Chat API listener opens `GET …/conversations/{id}/listen`. */
export const LISTEN_PROTOCOLS = ['sse', 'websocket'] as const;
export type ListenProtocol = (typeof LISTEN_PROTOCOLS)[number];

export interface OpenListenerOptions {
  /** The user's key: the `x-user-key` header, or with `keyInQuery` the query parameter. */
  userKey?: string;
  /** Sends the key as `?x-user-key=<encodeURIComponent(key)>`, as the browser clients must. */
  keyInQuery?: boolean;
  /** The last signal number received: the listener resumes after it. */
  lastEventId?: string | number;
  /**
   * Where `lastEventId` goes: SSE sends the `Last-Event-ID` header by default (as an EventSource does);
   * a WebSocket always the `?lastEventId=` query parameter (it cannot send headers from a browser).
   */
  lastEventIdIn?: 'header' | 'query';
  /** Fails the open after this many milliseconds. */
  timeoutMs?: number;
}

/** How a listener's connection ended. */
export interface ListenerEnd {
  /** The WebSocket close code (1006 when the connection dropped without a close frame); none for SSE. */
  code?: number;
}

/** A Chat API listener, whatever its protocol: what it received, and ways to end it. */
export interface Listener {
  protocol: ListenProtocol;
  /** 200 (SSE) or 101 (WebSocket) once open; the error status when refused. */
  status: number;
  /** Whether the server accepted the listener (an event stream, or an upgrade). */
  opened: boolean;
  /** The JSON error body of a refused listener (`{ id, code, type, message }`). */
  error?: Record<string, unknown>;
  /** Every signal's text as it came, pings left out: the SSE `data:` lines, or the WebSocket messages. */
  raw(): string[];
  /** The signals received, parsed, in order (`signals_missed` included). */
  signals(): SseSignal[];
  /** How many `ping` keep-alives came. */
  pings(): number;
  /** The number of the last signal received, as the wire gave it. */
  lastId(): string | undefined;
  /** WebSocket messages that came as binary frames (the protocol sends text only); 0 for SSE. */
  readonly binaryMessages: number;
  /** Whether the connection ended, whoever ended it. */
  readonly ended: boolean;
  /** Resolves when the connection ends, with the WebSocket close code. */
  closed: Promise<ListenerEnd>;
  /** Polls until `check` holds for what was received, failing after `ms` (or at the end) with `what`. */
  waitUntil(what: string, check: (listener: Listener) => boolean, ms?: number): Promise<void>;
  /** Resolves with the first signal matching `match` (already received or to come). */
  waitForSignal(what: string, match: (signal: SseSignal) => boolean, ms?: number): Promise<SseSignal>;
  /** Drops the connection from the client's side, as a network failure would (no WebSocket close frame). */
  destroy(): void;
  /** Stops reading the socket, as a client too slow to keep up would: the server's writes pile up. */
  pause(): void;
  /** Reads the socket again after `pause`. */
  resume(): void;
}

/**
 * Opens a listener on `url` (a Chat API `…/conversations/{id}/listen` URL, http://) over `protocol`;
 * resolves once it is open, or refused (then `status` and `error` say why).
 */
export async function openListener(
  protocol: ListenProtocol,
  url: string,
  options: OpenListenerOptions = {},
): Promise<Listener> {
  const query: string[] = [];
  if (options.keyInQuery && options.userKey !== undefined) {
    query.push(`x-user-key=${encodeURIComponent(options.userKey)}`);
  }
  const resumeIn = options.lastEventIdIn ?? (protocol === 'sse' ? 'header' : 'query');
  if (options.lastEventId !== undefined && resumeIn === 'query') {
    query.push(`lastEventId=${encodeURIComponent(String(options.lastEventId))}`);
  }
  const full = query.length === 0 ? url : `${url}${url.includes('?') ? '&' : '?'}${query.join('&')}`;
  const headers: Record<string, string> = {};
  if (options.userKey !== undefined && !options.keyInQuery) headers['x-user-key'] = options.userKey;
  if (options.lastEventId !== undefined && resumeIn === 'header') {
    headers['last-event-id'] = String(options.lastEventId);
  }
  return protocol === 'sse'
    ? sseListener(full, headers, options.timeoutMs)
    : webSocketListener(full, headers, options.timeoutMs);
}

function parseError(status: number, body: string): Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    assert.fail(`a refused listener (${status}) gets a JSON error body, not ${JSON.stringify(body)}`);
  }
}

async function sseListener(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number | undefined,
): Promise<Listener> {
  const stream: SseStream = await openSse(url, { headers, ...(timeoutMs !== undefined && { timeoutMs }) });
  const opened = stream.status === 200;
  let error: Record<string, unknown> | undefined;
  if (!opened) {
    await stream.closed;
    error = parseError(stream.status, stream.body());
  }
  const isPing = (data: string) => data === 'ping';
  const signals = parsedOnce(() => stream.frames, signalOf);
  const listener: Listener = {
    protocol: 'sse',
    status: stream.status,
    opened,
    ...(error && { error }),
    raw: () => stream.frames.filter((f) => !isPing(f.data)).map((f) => f.data),
    signals,
    pings: () => stream.frames.filter((f) => isPing(f.data)).length,
    lastId: () => stream.lastId(),
    binaryMessages: 0,
    get ended() {
      return stream.ended;
    },
    closed: stream.closed.then(() => ({})),
    waitUntil: (what, check, ms) => stream.waitUntil(what, () => check(listener), ms),
    waitForSignal: (what, match, ms) => waitForSignal(listener, what, match, ms),
    destroy: () => stream.destroy(),
    pause: () => stream.pause(),
    resume: () => stream.resume(),
  };
  return listener;
}

/**
 * The signals of what a listener received, each item parsed once (a wait re-reads them at every
 * arrival: parsing them all each time would be quadratic over a long backlog); `parse` skips pings.
 */
function parsedOnce<T>(items: () => T[], parse: (item: T) => SseSignal | undefined): () => SseSignal[] {
  const parsed: SseSignal[] = [];
  let done = 0;
  return () => {
    const all = items();
    for (; done < all.length; done++) {
      const signal = parse(all[done]!);
      if (signal) parsed.push(signal);
    }
    return [...parsed];
  };
}

async function waitForSignal(
  listener: Listener,
  what: string,
  match: (signal: SseSignal) => boolean,
  ms?: number,
): Promise<SseSignal> {
  let found: SseSignal | undefined;
  await listener.waitUntil(
    what,
    (l) => {
      found = l.signals().find(match);
      return found !== undefined;
    },
    ms,
  );
  return found as SseSignal;
}

/** A WebSocket message's signal: the SSE `data:` JSON `{type,data}` plus its number as `id` (NaN without). */
function webSocketSignal(text: string): SseSignal {
  const parsed = JSON.parse(text) as { type: string; data: Record<string, unknown>; id?: unknown };
  return {
    seq: typeof parsed.id === 'string' ? Number(parsed.id) : NaN,
    type: parsed.type,
    data: parsed.data,
  };
}

function webSocketListener(
  url: string,
  headers: Record<string, string>,
  timeoutMs = 10_000,
): Promise<Listener> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), { headers });
  const texts: string[] = [];
  let pings = 0;
  let binaryMessages = 0;
  let ended = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  socket.on('message', (data, isBinary) => {
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    if (isBinary) binaryMessages++;
    if (text === 'ping') pings++;
    else texts.push(text);
    notify();
  });
  const closed = new Promise<ListenerEnd>((done) => {
    socket.on('close', (code) => {
      ended = true;
      notify();
      done({ code });
    });
  });
  const describe = () => JSON.stringify(texts).slice(0, 2000);
  const signals = parsedOnce(() => texts, webSocketSignal);
  const listener: Listener = {
    protocol: 'websocket',
    status: 0,
    opened: false,
    raw: () => [...texts],
    signals,
    pings: () => pings,
    lastId: () => {
      const seq = signals().at(-1)?.seq;
      return seq === undefined || Number.isNaN(seq) ? undefined : String(seq);
    },
    get binaryMessages() {
      return binaryMessages;
    },
    get ended() {
      return ended;
    },
    closed,
    waitUntil: (what, check, ms) =>
      waitFor(what, () => check(listener), {
        waiters,
        ended: () => ended,
        describe: () => `the socket closed before ${what}; messages: ${describe()}`,
        received: () => `messages: ${describe()}`,
        ms,
      }),
    waitForSignal: (what, match, ms) => waitForSignal(listener, what, match, ms),
    destroy: () => socket.terminate(),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`opening ${url} as a WebSocket timed out`));
    }, timeoutMs);
    socket.on('upgrade', (response) => {
      listener.status = response.statusCode ?? 0;
    });
    // A refused upgrade: the status and the JSON error body, as over SSE.
    socket.on('unexpected-response', (request, response) => {
      clearTimeout(timer);
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        request.destroy();
        const status = response.statusCode ?? 0;
        ended = true;
        resolve({ ...listener, status, error: parseError(status, body), closed: Promise.resolve({}) });
      });
    });
    socket.on('error', (err) => {
      // After the open, an error only ends the socket (its close event follows).
      if (socket.readyState === WebSocket.CONNECTING) {
        clearTimeout(timer);
        reject(err);
      }
    });
    socket.on('open', () => {
      clearTimeout(timer);
      listener.opened = true;
      resolve(listener);
    });
  });
}
