import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import * as chat from '@botpress/chat';
import { createTestBot } from './runtime.ts';
import type { TestBot } from './runtime.ts';
import type { TestServer } from './server.ts';

/** One server-sent event as it came over the wire. */
export interface SseFrame {
  /** The `id:` field, if the frame had one. */
  id?: string;
  /** The `event:` field, if the frame had one (the chat client drops named events other than `message`). */
  event?: string;
  /** The `data:` lines, joined by newlines. */
  data: string;
}

/** A Chat API signal read from a frame: `data: {"type","data"}` with its `id:` as a number. */
export interface SseSignal {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface SseOptions {
  /** The `x-user-key` header. */
  userKey?: string;
  /** The `Last-Event-ID` header. */
  lastEventId?: string | number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Defaults to no agent: a socket of its own per stream. */
  agent?: http.Agent | false;
  /** Fails the open after this many milliseconds. */
  timeoutMs?: number;
  /** Keep the frames (default); the load check only counts what it needs. */
  onFrame?: (frame: SseFrame) => void;
}

/**
 * A raw SSE reader over node:http, for what the official client does not expose: status and headers,
 * `id:` fields, ping frames, `Last-Event-ID`, and dropping the connection on purpose.
 */
export interface SseStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every frame received so far, in order (unless `onFrame` was given). */
  frames: SseFrame[];
  /** The body when the answer was not an event stream. */
  body(): string;
  /** Whether the server ended the stream (or the socket closed). */
  readonly ended: boolean;
  /** Resolves when the stream ends, whoever ends it. */
  closed: Promise<void>;
  /** The frames that carry a signal (not pings), parsed. */
  signals(): SseSignal[];
  /** The `id:` of the last frame that had one. */
  lastId(): string | undefined;
  /** Polls until `check` holds for the frames received, failing after `ms` with `what`. */
  waitUntil(what: string, check: (stream: SseStream) => boolean, ms?: number): Promise<void>;
  /** Resolves with the first signal matching `match` (already received or to come). */
  waitForSignal(what: string, match: (signal: SseSignal) => boolean, ms?: number): Promise<SseSignal>;
  /** Drops the connection from the client's side, as a network failure would. */
  destroy(): void;
  /** Stops reading the socket, as a client too slow to keep up would: the server's writes pile up. */
  pause(): void;
  /** Reads the socket again after `pause`. */
  resume(): void;
}

export interface WaitOptions {
  /** Called on each arrival: the check runs again. */
  waiters: Set<() => void>;
  ended(): boolean;
  /** The failure when the reader ended before the check held. */
  describe(): string;
  /** What was received, for a timeout's failure. */
  received(): string;
  ms?: number;
}

/** Resolves once `check` holds, tried now and on each arrival; fails if the reader ends first, or after `ms`. */
export function waitFor(what: string, check: () => boolean, options: WaitOptions): Promise<void> {
  const ms = options.ms ?? 10_000;
  return new Promise<void>((done, fail) => {
    const attempt = () => {
      let ok: boolean;
      try {
        ok = check();
      } catch (err) {
        cleanup();
        fail(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (ok) {
        cleanup();
        done();
      } else if (options.ended()) {
        cleanup();
        fail(new assert.AssertionError({ message: options.describe() }));
      }
    };
    const timeout = setTimeout(() => {
      cleanup();
      fail(
        new assert.AssertionError({
          message: `timed out after ${ms} ms waiting for ${what}; ${options.received()}`,
        }),
      );
    }, ms);
    const cleanup = () => {
      clearTimeout(timeout);
      options.waiters.delete(attempt);
    };
    options.waiters.add(attempt);
    attempt();
  });
}

/** Splits a text of complete SSE blocks into frames; returns the frames and the incomplete rest. */
export function parseSseBlocks(text: string): { frames: SseFrame[]; rest: string } {
  const normalized = text.replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = blocks.pop() ?? '';
  const frames: SseFrame[] = [];
  for (const block of blocks) {
    const frame: SseFrame = { data: '' };
    const data: string[] = [];
    let hasData = false;
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        data.push(value);
        hasData = true;
      } else if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
    }
    if (!hasData && frame.id === undefined && frame.event === undefined) continue;
    frame.data = data.join('\n');
    frames.push(frame);
  }
  return { frames, rest };
}

/** The signal of a frame, or undefined for pings and anything else. */
export function signalOf(frame: SseFrame): SseSignal | undefined {
  if (frame.data === 'ping') return undefined;
  const parsed = JSON.parse(frame.data) as { type: string; data: Record<string, unknown> };
  return { seq: Number(frame.id), type: parsed.type, data: parsed.data };
}

/** Opens `GET {url}` as an event stream; resolves once the status and headers are in. */
export function openSse(url: string, options: SseOptions = {}): Promise<SseStream> {
  const headers: Record<string, string> = {
    accept: 'text/event-stream',
    'cache-control': 'no-cache',
    ...options.headers,
  };
  if (options.userKey !== undefined) headers['x-user-key'] = options.userKey;
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);

  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: options.agent ?? false });
    const timer = setTimeout(() => {
      request.destroy(new Error(`opening ${url} timed out`));
    }, options.timeoutMs ?? 10_000);
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.on('response', (response) => {
      clearTimeout(timer);
      // Errors after the open (the socket dropped on purpose) only end the stream.
      request.removeAllListeners('error');
      request.on('error', () => {});
      response.on('error', () => {});
      response.setEncoding('utf8');
      const frames: SseFrame[] = [];
      let pending = '';
      let raw = '';
      let ended = false;
      const waiters = new Set<() => void>();
      const notify = () => {
        for (const w of [...waiters]) w();
      };
      const closed = new Promise<void>((done) => {
        const finish = () => {
          if (ended) return;
          ended = true;
          notify();
          done();
        };
        response.on('end', finish);
        response.on('close', finish);
        response.on('aborted', finish);
      });
      const isStream = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
      response.on('data', (chunk: string) => {
        if (!isStream) {
          raw += chunk;
          return;
        }
        const parsed = parseSseBlocks(pending + chunk);
        pending = parsed.rest;
        for (const frame of parsed.frames) {
          if (options.onFrame) options.onFrame(frame);
          else frames.push(frame);
        }
        if (parsed.frames.length > 0) notify();
      });

      const stream: SseStream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        frames,
        body: () => raw,
        get ended() {
          return ended;
        },
        closed,
        signals: () => frames.map(signalOf).filter((s): s is SseSignal => s !== undefined),
        lastId: () => frames.findLast((f) => f.id !== undefined)?.id,
        waitUntil: (what, check, ms) =>
          waitFor(what, () => check(stream), {
            waiters,
            ended: () => ended,
            describe: () =>
              `the stream ended before ${what}; frames: ${JSON.stringify(frames).slice(0, 2000)}`,
            received: () => `frames: ${JSON.stringify(frames).slice(0, 2000)}`,
            ms,
          }),
        waitForSignal: async (what, match, ms) => {
          let found: SseSignal | undefined;
          await stream.waitUntil(
            what,
            (s) => {
              found = s.signals().find(match);
              return found !== undefined;
            },
            ms,
          );
          return found as SseSignal;
        },
        destroy: () => {
          request.destroy();
          response.destroy();
        },
        pause: () => response.pause(),
        resume: () => response.resume(),
      };
      resolve(stream);
    });
  });
}

/** The Chat API URL of a conversation's event stream (the conversation id is not encoded, as the client does). */
export function listenUrl(webhookUrl: string, conversationId: string): string {
  return `${webhookUrl}/conversations/${conversationId}/listen`;
}

// Chat API helpers shared by the chat-*.test.ts files.

/** A bot with its chat channel, as getBot shows it. */
export interface ChatBot extends TestBot {
  webhookId: string;
  /** `{base_url}/chat/{webhookId}`: what `chat.Client.connect({ apiUrl })` takes. */
  webhookUrl: string;
}

/** Creates a bot (and a bot API key) and reads its chat channel from getBot. */
export async function createChatBot(t: TestServer, name = 'chat-bot'): Promise<ChatBot> {
  const bot = await createTestBot(t, name);
  const { bot: full } = await t.client().getBot({ id: bot.botId });
  const entry = full.integrations.chat;
  assert.ok(entry, 'getBot lists the chat channel under integrations');
  return { ...bot, webhookId: entry.webhookId, webhookUrl: entry.webhookUrl };
}

export interface RawChatResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A plain HTTP call to a Chat API route, for status codes and raw bodies. */
export async function rawChat(
  webhookUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawChatResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-user-key'] = options.key;
  let payload: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${webhookUrl}${path}`, { method, headers, body: payload });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body };
}

/** Asserts a raw answer is the error body `{ id, code, type, message }` with this status and type. */
export function assertChatError(res: RawChatResponse, status: number, type: string): void {
  assert.equal(res.status, status, `status ${status} (got ${res.status}: ${JSON.stringify(res.body)})`);
  const body = res.body as Record<string, unknown>;
  assert.equal(body.type, type);
  assert.equal(body.code, status);
  assert.equal(typeof body.id, 'string');
  assert.equal(typeof body.message, 'string');
}

type ChatErrorClass = abstract new (...args: never[]) => Error;

/**
 * Asserts that a call of the official chat client rejects with the API error class `errorClass`, whose
 * `type` and `code` are `type` and `code` (and whose message matches `message`), and returns it.
 */
export async function chatRejects(
  promise: Promise<unknown>,
  errorClass: ChatErrorClass,
  type: string,
  code: number,
  message?: RegExp,
): Promise<Error & { type: string; code: number }> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected a ${type} error, but the call succeeded`);
  const describe = chat.isApiError(caught)
    ? `${caught.type} (${caught.code}): ${caught.message}`
    : caught instanceof Error
      ? `${caught.name}: ${caught.message}`
      : JSON.stringify(caught);
  assert.ok(chat.isApiError(caught), `expected an API error ${type}, got ${describe}`);
  assert.equal(caught.type, type, `expected ${type}, got ${describe}`);
  assert.equal(caught.code, code, `expected code ${code}, got ${describe}`);
  assert.ok(caught instanceof errorClass, `the error is an instance of the ${type} class`);
  if (message) assert.match(caught.message, message);
  return caught;
}

/** Polls `probe` until it returns true, failing after `ms` with `what`. */
export async function eventually(what: string, probe: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
