import { isIP } from 'node:net';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { createParser } from 'eventsource-parser';
import type { EventSourceMessage } from 'eventsource-parser';
import type { Provider } from './providers.ts';
import type { ChatCompletionBody } from './openai-wire.ts';

/** A JSON object as a provider answered it: read field by field where it is used. */
export type Answer = Record<string, unknown>;

/**
 * How a provider failed, in the terms the gateway answers with:
 * - `timeout`: no answer within the deadline;
 * - `rate_limited`: 429 (with the provider's `Retry-After` when it gave one);
 * - `unavailable`: unreachable, a 5xx, a connection cut, an answer that does not parse;
 * - `model_not_found`: the provider does not serve the model (another of a fallback array may answer);
 * - `refused`: the provider refused this server's key (the operator's configuration);
 * - `invalid`: the provider refused the request itself (a 4xx about what was asked).
 */
export type FailureKind =
  'timeout' | 'rate_limited' | 'unavailable' | 'model_not_found' | 'refused' | 'invalid';

/** A provider's failure. Its message never carries the provider's key. */
export class ProviderFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryAfterSeconds?: number,
    /** What the provider answered, when it answered: its status and its error's `code`. */
    readonly answered?: { status: number; code: unknown },
  ) {
    super(message);
  }
}

/** Thrown when the caller went away: nothing is answered, and nothing is counted as the provider's failure. */
export class Cancelled extends Error {}

/** Longest provider error text repeated to callers. */
const PROVIDER_TEXT_MAX = 300;

function redacted(provider: Provider, text: string): string {
  const cut = text.slice(0, PROVIDER_TEXT_MAX);
  return provider.apiKey ? cut.split(provider.apiKey).join('[redacted]') : cut;
}

/** Kept-alive connections to the providers, a pool per scheme, each idle one closed after a few seconds. */
const AGENT_OPTIONS = { keepAlive: true, timeout: 4_000 };
const agents = { http: new http.Agent(AGENT_OPTIONS), https: new https.Agent(AGENT_OPTIONS) };

/** The failure of a request that got no answer: the caller's cancellation, the deadline, or the network. */
function unanswered(provider: Provider, err: unknown, signals: RequestSignals): Error {
  if (signals.caller?.aborted) return new Cancelled('The caller went away');
  if (signals.deadline.aborted)
    return new ProviderFailure('timeout', `The provider "${provider.name}" did not answer in time`);
  const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause : err).message : String(err);
  return new ProviderFailure(
    'unavailable',
    `The provider "${provider.name}" could not be reached: ${redacted(provider, cause)}`,
  );
}

/** The caller's signal (a client that goes away) and the call's deadline. */
export interface RequestSignals {
  caller?: AbortSignal;
  deadline: AbortSignal;
}

/**
 * A call's deadline: its signal aborts after `ms`, unless the call ends first and releases it. Not
 * `AbortSignal.timeout`, whose timer stays armed until it fires or its signal is collected: a busy
 * gateway kept one for every call of the last full collection (2,000 at 64 streams at a time), each
 * surviving the young generation's collections with its weak references.
 */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number) {
    this.timer = setTimeout(() => this.controller.abort(), ms);
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  release(): void {
    clearTimeout(this.timer);
  }
}

/** Runs `call` with the caller's signal and a deadline of `ms`, released when the call settles. */
export async function withDeadline<T>(
  ms: number,
  caller: AbortSignal | undefined,
  call: (signals: RequestSignals) => Promise<T>,
): Promise<T> {
  const deadline = new Deadline(ms);
  try {
    return await call({ caller, deadline: deadline.signal });
  } finally {
    deadline.release();
  }
}

/** Calls `abort` when either signal aborts; answers what stops listening. */
function onAbort(signals: RequestSignals, abort: () => void): () => void {
  const { caller, deadline } = signals;
  caller?.addEventListener('abort', abort);
  deadline.addEventListener('abort', abort);
  return () => {
    caller?.removeEventListener('abort', abort);
    deadline.removeEventListener('abort', abort);
  };
}

/** A provider's answer, its body still to be read; `done` once it is read or given up. */
interface Answered {
  response: IncomingMessage;
  done(): void;
}

/** A request body and its type. */
interface Body {
  bytes: string | Uint8Array;
  type: string;
}

/**
 * Sends a request to the provider through `node:http` (a stream's tokens are read from its socket's
 * buffers, without `fetch`'s web streams: at 64 streams at a time they were a fifth of the gateway's CPU).
 * A failed answer is read here and thrown as a `ProviderFailure`; the signals cancel the request, its
 * body's reading included, until `done()`.
 */
async function send(
  provider: Provider,
  path: string,
  body: Body | undefined,
  signals: RequestSignals,
): Promise<Answered> {
  const url = new URL(`${provider.baseUrl}${path}`);
  const { connections } = provider;
  // A literal address is connected to without a lookup: it is checked here.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = connections && isIP(host) !== 0 ? connections.refusal(host) : undefined;
  if (refused !== undefined)
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" could not be reached: ${host} is ${refused}`,
    );
  const pool = connections?.agents ?? agents;
  const headers: Record<string, string | number> = {
    accept: 'application/json',
    ...(provider.apiKey && { authorization: `Bearer ${provider.apiKey}` }),
    ...(body && { 'content-type': body.type, 'content-length': Buffer.byteLength(body.bytes) }),
  };
  const attempt = (mayRetry: boolean): Promise<Answered> =>
    new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const request = (secure ? https : http).request(url, {
        method: body ? 'POST' : 'GET',
        headers,
        agent: secure ? pool.https : pool.http,
      });
      const stop = onAbort(signals, () => request.destroy(new Error('aborted')));
      let answered = false;
      request.once('response', (response) => {
        answered = true;
        resolve({ response, done: stop });
      });
      // Every error, not once: one after the answer came (the connection cut, the request destroyed)
      // is the body's reader's to report, and must not go unheard here.
      request.on('error', (err: NodeJS.ErrnoException) => {
        stop();
        if (answered) return;
        // A kept-alive connection the provider closed as it was taken: the request never reached it.
        if (mayRetry && request.reusedSocket && err.code === 'ECONNRESET') resolve(attempt(false));
        else reject(unanswered(provider, err, signals));
      });
      request.end(body?.bytes);
    });
  if (signals.caller?.aborted || signals.deadline.aborted)
    throw unanswered(provider, new Error('aborted'), signals);
  const answered = await attempt(true);
  const { response } = answered;
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return answered;
  try {
    const text = await readText(provider, response, signals).catch(() => '');
    throw failureOf(provider, status, response.headers['retry-after'], text);
  } finally {
    answered.done();
  }
}

/** Text a body's reader holds for its next read before the answer is paused. */
const HELD_TEXT_MAX = 64 * 1024;

/**
 * An answer's body as text, read as it arrives: each `next()` answers all that came since the last
 * (undefined at the end), so a reader that falls behind takes several of the socket's reads at once.
 * Fails with what ended the answer early (the connection cut, or the request destroyed).
 */
function bodyReader(response: IncomingMessage): { next(): Promise<string | undefined> } {
  response.setEncoding('utf8');
  let held = '';
  let ended = false;
  let failure: Error | undefined;
  let waiting: { resolve(text: string | undefined): void; reject(err: Error): void } | undefined;
  const settle = () => {
    if (!waiting) return;
    const reader = waiting;
    if (held !== '') {
      const text = held;
      held = '';
      waiting = undefined;
      reader.resolve(text);
    } else if (failure) {
      waiting = undefined;
      reader.reject(failure);
    } else if (ended) {
      waiting = undefined;
      reader.resolve(undefined);
    }
  };
  response.on('data', (piece: string) => {
    held += piece;
    if (held.length > HELD_TEXT_MAX) response.pause();
    settle();
  });
  response.on('end', () => {
    ended = true;
    settle();
  });
  response.on('error', (err) => {
    failure = err;
    settle();
  });
  response.on('close', () => {
    if (!ended) failure ??= new Error('the answer was cut');
    settle();
  });
  return {
    next: () =>
      new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        if (response.isPaused()) response.resume();
        settle();
      }),
  };
}

async function readText(provider: Provider, response: IncomingMessage, signals: RequestSignals) {
  const reader = bodyReader(response);
  let text = '';
  try {
    for (let piece = await reader.next(); piece !== undefined; piece = await reader.next()) text += piece;
  } catch (err) {
    throw unanswered(provider, err, signals);
  }
  return text;
}

function failureOf(
  provider: Provider,
  status: number,
  retryAfterHeader: string | undefined,
  body: string,
): ProviderFailure {
  let message = body;
  let code: unknown;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && 'error' in parsed) {
      const { error } = parsed;
      if (typeof error === 'string') message = error;
      else if (error && typeof error === 'object') {
        if ('message' in error && typeof error.message === 'string') message = error.message;
        if ('code' in error) code = error.code;
      }
    }
  } catch {
    // Not JSON: the text itself says what went wrong.
  }
  const said = `The provider "${provider.name}" answered ${status}: ${redacted(provider, message)}`;
  const answered = { status, code };
  if (status === 429) {
    const retryAfter = Number(retryAfterHeader);
    return new ProviderFailure(
      'rate_limited',
      said,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
      answered,
    );
  }
  if (status === 401 || status === 403) {
    // The provider's own text may quote part of the key: it is not repeated.
    return new ProviderFailure(
      'refused',
      `The provider "${provider.name}" refused this server's API key (${status})`,
      undefined,
      answered,
    );
  }
  if (status === 404 || code === 'model_not_found')
    return new ProviderFailure('model_not_found', said, undefined, answered);
  if (status >= 400 && status < 500) return new ProviderFailure('invalid', said, undefined, answered);
  return new ProviderFailure('unavailable', said, undefined, answered);
}

/** The provider's answer to a request, as JSON. */
async function requestJson(
  provider: Provider,
  path: string,
  body: Body | undefined,
  signals: RequestSignals,
): Promise<unknown> {
  const answered = await send(provider, path, body, signals);
  let text: string;
  try {
    text = await readText(provider, answered.response, signals);
  } finally {
    answered.done();
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" answered something that is not JSON`,
    );
  }
}

const json = (value: unknown): Body => ({ bytes: JSON.stringify(value), type: 'application/json' });

export function isObject(value: unknown): value is Answer {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A chat completion, whole. */
export async function complete(
  provider: Provider,
  body: ChatCompletionBody,
  signals: RequestSignals,
): Promise<Answer> {
  const answer = await requestJson(provider, '/chat/completions', json({ ...body, stream: false }), signals);
  if (!isObject(answer) || !Array.isArray(answer.choices)) {
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" answered a completion without choices`,
    );
  }
  return answer;
}

/**
 * A chat completion as the provider streams it: the events that came since the last were asked for,
 * together (usage in the last, when the provider gives it), so that what follows runs once for them
 * all, not once a token. Stops reading, and so cancels the provider's work, when the caller's signal
 * aborts or the events are no longer asked for; after the last event the connection is kept.
 */
export async function* stream(
  provider: Provider,
  body: ChatCompletionBody,
  signals: RequestSignals,
): AsyncGenerator<Answer[]> {
  const answered = await send(
    provider,
    '/chat/completions',
    json({ ...body, stream: true, stream_options: { include_usage: true } }),
    signals,
  );
  const { response } = answered;
  const reader = bodyReader(response);
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  let finished = false;
  try {
    for (;;) {
      let text: string | undefined;
      try {
        text = await reader.next();
      } catch (err) {
        throw unanswered(provider, err, signals);
      }
      if (text === undefined) break;
      parser.feed(text);
      const batch: Answer[] = [];
      for (const event of events.splice(0)) {
        if (event.data === '[DONE]') {
          finished = true;
          break;
        }
        batch.push(parseChunk(provider, event.data));
      }
      if (batch.length > 0) yield batch;
      if (finished) return;
    }
  } finally {
    // Whether the stream ended, failed or its reader stopped reading: the provider's request ends too.
    // After `[DONE]` the end of the body is read in the background: the connection goes back to the pool.
    if (finished) response.resume();
    else response.destroy();
    answered.done();
  }
  throw new ProviderFailure(
    'unavailable',
    `The provider "${provider.name}" ended its stream before it was done`,
  );
}

function parseChunk(provider: Provider, data: string): Answer {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" streamed an event that is not JSON`,
    );
  }
  if (!isObject(chunk))
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" streamed an event that is not an object`,
    );
  if (isObject(chunk.error)) {
    const message = typeof chunk.error.message === 'string' ? chunk.error.message : 'an error';
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" streamed an error: ${redacted(provider, message)}`,
    );
  }
  return chunk;
}

/** The ids of the models the provider serves (`GET /models`). */
export async function listModels(provider: Provider, signals: RequestSignals): Promise<string[]> {
  const answer = await requestJson(provider, '/models', undefined, signals);
  const data = isObject(answer) && Array.isArray(answer.data) ? answer.data : [];
  return data.flatMap((model) => (isObject(model) && typeof model.id === 'string' ? [model.id] : []));
}

/** A transcription of an audio file (`POST /audio/transcriptions`, multipart). */
export async function transcribe(
  provider: Provider,
  audio: { bytes: Uint8Array; mimeType: string; fileName: string; model: string },
  signals: RequestSignals,
): Promise<{ text: string; durationSeconds: number | undefined }> {
  const form = new FormData();
  form.set('file', new Blob([audio.bytes], { type: audio.mimeType }), audio.fileName);
  form.set('model', audio.model);
  form.set('response_format', 'verbose_json');
  // The form written as its multipart bytes, with the boundary its type names.
  const multipart = new Response(form);
  const body = {
    bytes: new Uint8Array(await multipart.arrayBuffer()),
    type: multipart.headers.get('content-type') ?? 'multipart/form-data',
  };
  const answer = await requestJson(provider, '/audio/transcriptions', body, signals);
  if (!isObject(answer) || typeof answer.text !== 'string') {
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" answered a transcription without text`,
    );
  }
  return {
    text: answer.text,
    durationSeconds: typeof answer.duration === 'number' ? answer.duration : undefined,
  };
}

/**
 * The vectors of texts, in their order (`POST /embeddings`, one request for all of them), and the
 * tokens the provider counted for them (0 when it says nothing).
 */
export async function embeddings(
  provider: Provider,
  request: { model: string; input: string[] },
  signals: RequestSignals,
): Promise<{ vectors: number[][]; inputTokens: number }> {
  const answer = await requestJson(provider, '/embeddings', json(request), signals);
  const data = isObject(answer) && Array.isArray(answer.data) ? answer.data : undefined;
  const vectors: number[][] = [];
  for (const item of data ?? []) {
    if (!isObject(item) || typeof item.index !== 'number') continue;
    const vector = vectorOf(item.embedding);
    if (vector) vectors[item.index] = vector;
  }
  const complete = vectors.length === request.input.length && [...vectors].every((v) => v !== undefined);
  if (!complete) {
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" answered ${data?.length ?? 0} embeddings for ${request.input.length} texts`,
    );
  }
  const usage = isObject(answer) && isObject(answer.usage) ? answer.usage : undefined;
  const tokens = usage?.prompt_tokens;
  return { vectors, inputTokens: typeof tokens === 'number' && tokens >= 0 ? tokens : 0 };
}

/** An embedding as answered (as numbers: the request asks for no other encoding). */
function vectorOf(embedding: unknown): number[] | undefined {
  const numbers =
    Array.isArray(embedding) && embedding.length > 0 && embedding.every((n) => typeof n === 'number');
  return numbers ? embedding : undefined;
}
