// A small OpenAI-compatible model server of the project's own, for the suites of the LLM gateway (no
// model can be downloaded where the tests run). A real node:http server on 127.0.0.1, deterministic:
//
//   const models = await startModelServer({ apiKey: 'sk-test' });
//   // PARLEY_LLM_BASE_URL = models.url (ends in /v1), PARLEY_LLM_API_KEY = 'sk-test'
//   models.reply('Hello!');                                  // the next chat completion says this
//   models.replyWhen('weather', { toolCalls: [{ name: 'getWeather', arguments: { city: 'Paris' } }] });
//   models.fail({ kind: 'status', status: 429, retryAfterSeconds: 1 }, { times: 2 });
//   … models.requests[0].headers, .body, .connection, await .settled ('answered' | 'aborted' | 'dropped')
//   await models.close();
//
// Routes (OpenAI's shapes; any other answers 404 in OpenAI's error shape):
// - `GET /v1/models`, `GET /v1/models/{id}`: the models served (`options.models`, else DEFAULT_MODELS).
//   A POST naming another model answers 404 `model_not_found`.
// - `POST /v1/chat/completions`: see model-request.ts for what is read, model-replies.ts for what is
//   answered (`echo: <last user text>` unless scripted; `stop` and `max_tokens` honoured), model-tokens.ts
//   for how `usage` counts, model-chat.ts for the stream (`stream`, `stream_options.include_usage`).
// - `POST /v1/embeddings`: model-embeddings.ts; `dimensions` and `encoding_format: 'base64'` honoured.
// - `POST /v1/audio/transcriptions` (multipart `file` and `model`): `options.transcript`, when given
//   (without it the route is absent: 404, as on a provider that has no speech-to-text). With
//   `response_format: verbose_json`, the audio's `duration` too, as if it were 16 kHz 16-bit mono PCM
//   (AUDIO_BYTES_PER_SECOND).
// With `options.apiKey`, every route wants `Authorization: Bearer <apiKey>` (401 `invalid_api_key` else).
//
// Failure modes (`fail`) hit the next requests that match their scope, after authentication: each
// request takes the first armed failure that matches it, if any, and uses up one of its `times`.
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { answerChatCompletion } from './model-chat.ts';
import type { Pacing } from './model-chat.ts';
import { base64Embedding, embed } from './model-embeddings.ts';
import { Exchange } from './model-exchange.ts';
import type { OpenAiError, ReceivedRequest } from './model-exchange.ts';
import { MultipartForm, readMultipart } from './model-multipart.ts';
import { matches } from './model-replies.ts';
import type { ReplyMatcher, ScriptedReply } from './model-replies.ts';
import { isRecord } from './model-request.ts';
import type { ChatCall } from './model-request.ts';
import { countTokens } from './model-tokens.ts';

export type { Outcome, ReceivedRequest } from './model-exchange.ts';
export type { Pacing } from './model-chat.ts';
export type { ChatCall } from './model-request.ts';
export type { ReplyMatcher, ScriptedReply } from './model-replies.ts';

export const DEFAULT_MODELS = ['test-best', 'test-fast', 'test-embeddings', 'test-transcribe'];

/** How many bytes of an upload make one second of the duration `verbose_json` transcriptions report. */
export const AUDIO_BYTES_PER_SECOND = 32_000;

export interface ModelServerOptions {
  /** The model ids served (default DEFAULT_MODELS). */
  models?: string[];
  /** Requires `Authorization: Bearer <apiKey>` on every request. */
  apiKey?: string;
  /** The length of embedding vectors when a request does not say (`dimensions`); default 64. */
  embeddingDimensions?: number;
  /**
   * Embedding models of their own, by id (each must be served, `models`): their length of vectors, and
   * their table of synonyms (model-embeddings.ts's SYNONYMS when absent), so that two models rank apart.
   */
  embeddingModels?: Record<string, EmbeddingModel>;
  /** Enables `POST /v1/audio/transcriptions`, which answers this text. */
  transcript?: string;
  /** The pacing of streams (default none); `pace` changes it. */
  pacing?: Partial<Pacing>;
}

/** An embedding model of the test server: how long its vectors are, and which words it knows mean the same. */
export interface EmbeddingModel {
  dimensions?: number;
  synonyms?: Readonly<Record<string, string>>;
}

/**
 * A way to fail a request:
 * - `latency`: wait `ms`, then answer as usual;
 * - `status`: answer `status` with an error in OpenAI's shape (`error` overrides its fields; by default
 *   what OpenAI sends for 429, 500, 502, 503), with `retry-after` when `retryAfterSeconds` is given;
 * - `hang`: never answer (until the client leaves, or `close()`);
 * - `reset`: reset the connection before answering;
 * - `cut`: end the connection in the middle: a stream after `afterChunks` token chunks (default 2), a
 *   JSON answer halfway through;
 * - `malformed-json`: answer 200 with a JSON content type and a body that does not parse.
 */
export type Failure =
  | { kind: 'latency'; ms: number }
  | { kind: 'status'; status: number; retryAfterSeconds?: number; error?: Partial<OpenAiError> }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'cut'; afterChunks?: number }
  | { kind: 'malformed-json' };

/** Which requests a failure hits: the next `times` (default 1; `Infinity` for all) of this model and path. */
export interface FailureScope {
  times?: number;
  model?: string;
  /** e.g. `/v1/chat/completions`. */
  path?: string;
}

export interface ModelServer {
  /** The base URL, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  /** Every request received, in order, headers included. */
  requests: ReceivedRequest[];
  /** Scripts the replies of the next chat completions, one each, in order (before any `replyWhen`). */
  reply(...replies: ScriptedReply[]): void;
  /** Scripts the reply of every chat completion that `matcher` matches (the first rule that matches wins). */
  replyWhen(matcher: ReplyMatcher, reply: ScriptedReply): void;
  /** Fails the requests of `scope` in the way `failure` says. */
  fail(failure: Failure, scope?: FailureScope): void;
  /** Disarms every failure not used up yet. */
  clearFailures(): void;
  /** Changes the pacing of the streams that start from now on. */
  pace(pacing: Partial<Pacing>): void;
  /** Drops every connection (hanging ones included) and stops the server. */
  close(): Promise<void>;
}

interface ArmedFailure extends FailureScope {
  failure: Failure;
  remaining: number;
}

const DEFAULT_ERRORS: Record<number, OpenAiError> = {
  429: {
    message: 'Rate limit reached for requests. Please try again later.',
    type: 'requests',
    code: 'rate_limit_exceeded',
  },
  500: { message: 'The server had an error while processing your request.', type: 'server_error' },
  502: { message: 'Bad gateway.', type: 'server_error' },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error' },
};

/**
 * The settings that make a Parley server answer model calls with this server: `test-best` serves
 * `best`, `test-fast` serves `fast`.
 */
export function parleySettings(models: ModelServer): {
  llmBaseUrl: string;
  llmBestModel: string;
  llmFastModel: string;
} {
  return { llmBaseUrl: models.url, llmBestModel: 'test-best', llmFastModel: 'test-fast' };
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const models = options.models ?? DEFAULT_MODELS;
  const requests: ReceivedRequest[] = [];
  const connections = new WeakMap<Socket, number>();
  let accepted = 0;
  const connectionOf = (socket: Socket) => {
    const known = connections.get(socket);
    if (known !== undefined) return known;
    connections.set(socket, ++accepted);
    return accepted;
  };
  const exchanges = new Set<Exchange>();
  const queued: ScriptedReply[] = [];
  const rules: { matcher: ReplyMatcher; reply: ScriptedReply }[] = [];
  const failures: ArmedFailure[] = [];
  let pacing: Pacing = { firstTokenDelayMs: 0, tokenDelayMs: 0, ...options.pacing };
  let calls = 0;

  const chatScript = {
    replyFor: (call: ChatCall) => queued.shift() ?? rules.find((rule) => matches(rule.matcher, call))?.reply,
    nextCallId: () => ++calls,
    pacing: () => pacing,
  };

  const routes: Record<string, (exchange: Exchange) => Promise<void> | void> = {
    'GET /v1/models': (exchange) => exchange.sendJson(200, { object: 'list', data: models.map(modelEntry) }),
    'POST /v1/chat/completions': (exchange) => answerChatCompletion(exchange, chatScript),
    'POST /v1/embeddings': (exchange) =>
      answerEmbeddings(exchange, options.embeddingDimensions ?? 64, options.embeddingModels ?? {}),
    ...(options.transcript !== undefined && {
      'POST /v1/audio/transcriptions': answerTranscription(options.transcript),
    }),
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = new URL(request.url ?? '/', 'http://model-server').pathname;
    const method = request.method ?? 'GET';
    const body = parseBody(request.headers['content-type'], raw);
    const exchange = new Exchange(request, response, {
      method,
      path,
      headers: request.headers,
      body,
      connection: connectionOf(request.socket),
    });
    requests.push(exchange.record);
    exchanges.add(exchange);
    void exchange.record.settled.then(() => exchanges.delete(exchange));

    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      exchange.sendError(401, {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
      return;
    }
    const servedModel = /^\/v1\/models\/(.+)$/.exec(path)?.[1];
    const route =
      method === 'GET' && servedModel !== undefined
        ? (x: Exchange) => answerModel(x, decodeURIComponent(servedModel))
        : routes[`${method} ${path}`];
    if (route === undefined) {
      exchange.sendError(404, {
        message: `Unknown request URL: ${method} ${path}.`,
        type: 'invalid_request_error',
      });
      return;
    }
    const model = modelOf(body);
    if (method === 'POST' && model !== undefined && !models.includes(model)) {
      exchange.sendError(404, {
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
        type: 'invalid_request_error',
        code: 'model_not_found',
      });
      return;
    }
    const failure = takeFailure(path, model);
    if (failure && !(await applyFailure(exchange, failure))) return;
    await route(exchange);
  }

  function answerModel(exchange: Exchange, id: string): void {
    if (models.includes(id)) exchange.sendJson(200, modelEntry(id));
    else {
      exchange.sendError(404, {
        message: `The model '${id}' does not exist`,
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      });
    }
  }

  function takeFailure(path: string, model: string | undefined): Failure | undefined {
    const armed = failures.find(
      (f) =>
        f.remaining > 0 &&
        (f.path === undefined || f.path === path) &&
        (f.model === undefined || f.model === model),
    );
    if (!armed) return undefined;
    armed.remaining--;
    return armed.failure;
  }

  const server = http.createServer((request, response) => {
    handle(request, response).catch((err: unknown) => {
      // A client that left while its body came in, or a defect of the server: answer if still possible.
      if (!response.headersSent && !response.destroyed) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: String(err), type: 'server_error', param: null, code: null } }),
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the model server listens on TCP');
  const { port } = address;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => queued.push(...replies),
    replyWhen: (matcher, reply) => rules.push({ matcher, reply }),
    fail: (failure, scope = {}) => failures.push({ ...scope, failure, remaining: scope.times ?? 1 }),
    clearFailures: () => failures.splice(0),
    pace: (changes) => {
      pacing = { ...pacing, ...changes };
    },
    close: async () => {
      const open = [...exchanges];
      for (const exchange of open) exchange.markDropped();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.all([closed, ...open.map((exchange) => exchange.record.settled)]);
    },
  };
}

/** Applies a failure; true when the request goes on to its route afterwards. */
async function applyFailure(exchange: Exchange, failure: Failure): Promise<boolean> {
  switch (failure.kind) {
    case 'latency':
      await exchange.pause(failure.ms);
      return !exchange.gone;
    case 'status': {
      const error = { ...(DEFAULT_ERRORS[failure.status] ?? DEFAULT_ERRORS[500]), ...failure.error };
      exchange.sendError(
        failure.status,
        {
          message: error.message ?? 'Error.',
          type: error.type ?? 'server_error',
          param: error.param,
          code: error.code,
        },
        failure.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failure.retryAfterSeconds) },
      );
      return false;
    }
    case 'hang':
      return false;
    case 'reset':
      exchange.reset();
      return false;
    case 'cut':
      exchange.cutAfterChunks = failure.afterChunks ?? 2;
      return true;
    case 'malformed-json':
      if (isRecord(exchange.record.body) && exchange.record.body.stream === true) {
        exchange.response.writeHead(200, { 'content-type': 'text/event-stream' });
        exchange.response.end(
          'data: {"id": "chatcmpl-malformed", "choices": [{"delta": \n\ndata: [DONE]\n\n',
        );
      } else {
        exchange.response.writeHead(200, { 'content-type': 'application/json' });
        exchange.response.end('{"id": "chatcmpl-malformed", "choices": [{"index": 0, "message": ');
      }
      return false;
  }
}

function modelEntry(id: string) {
  return { id, object: 'model', created: 0, owned_by: 'parley-tests' };
}

function modelOf(body: unknown): string | undefined {
  if (body instanceof MultipartForm) return body.fields.model;
  if (!isRecord(body)) return undefined;
  const model = body.model;
  return typeof model === 'string' ? model : undefined;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

function parseBody(contentType: string | undefined, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const form = readMultipart(contentType, raw);
  if (form) return form;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function invalid(exchange: Exchange, message: string, param: string): void {
  exchange.sendError(400, { message, type: 'invalid_request_error', param });
}

function answerEmbeddings(
  exchange: Exchange,
  defaultDimensions: number,
  embeddingModels: Record<string, EmbeddingModel>,
): void {
  const body = exchange.record.body;
  if (!isRecord(body) || typeof body.model !== 'string') {
    invalid(exchange, 'you must provide a model parameter', 'model');
    return;
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || !input.every((text) => typeof text === 'string')) {
    invalid(exchange, "'input' must be a string or a non-empty array of strings.", 'input');
    return;
  }
  const own = embeddingModels[body.model];
  const dimensions = body.dimensions ?? own?.dimensions ?? defaultDimensions;
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1) {
    invalid(exchange, "'dimensions' must be a positive integer.", 'dimensions');
    return;
  }
  const base64 = body.encoding_format === 'base64';
  const tokens = input.reduce((sum, text) => sum + countTokens(text), 0);
  exchange.sendJson(200, {
    object: 'list',
    data: input.map((text, index) => {
      const vector = embed(text, dimensions, own?.synonyms);
      return { object: 'embedding', index, embedding: base64 ? base64Embedding(vector) : vector };
    }),
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

function answerTranscription(transcript: string) {
  return (exchange: Exchange): void => {
    const form = exchange.record.body;
    if (!(form instanceof MultipartForm) || form.files.file === undefined) {
      invalid(exchange, "A multipart body with a 'file' is required.", 'file');
      return;
    }
    if (form.fields.model === undefined) {
      invalid(exchange, 'you must provide a model parameter', 'model');
      return;
    }
    if (form.fields.response_format === 'text') {
      exchange.response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      exchange.response.end(transcript);
      return;
    }
    if (form.fields.response_format === 'verbose_json') {
      const duration = form.files.file.size / AUDIO_BYTES_PER_SECOND;
      exchange.sendJson(200, { task: 'transcribe', language: 'english', duration, text: transcript });
      return;
    }
    exchange.sendJson(200, { text: transcript });
  };
}
