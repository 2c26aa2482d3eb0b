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

function headers(provider: Provider, json: boolean): Record<string, string> {
  return {
    ...(json && { 'content-type': 'application/json' }),
    accept: 'application/json',
    ...(provider.apiKey && { authorization: `Bearer ${provider.apiKey}` }),
  };
}

/** The failure of a request that got no answer: the caller's cancellation, the deadline, or the network. */
function unanswered(provider: Provider, err: unknown, signals: RequestSignals): Error {
  if (signals.caller?.aborted) return new Cancelled('The caller went away');
  if (signals.deadline.aborted)
    return new ProviderFailure('timeout', `The provider "${provider.name}" did not answer in time`);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
  return new ProviderFailure(
    'unavailable',
    `The provider "${provider.name}" could not be reached: ${redacted(provider, cause)}`,
  );
}

async function failureOf(provider: Provider, response: Response): Promise<ProviderFailure> {
  const body = await response.text().catch(() => '');
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
  const said = `The provider "${provider.name}" answered ${response.status}: ${redacted(provider, message)}`;
  const { status } = response;
  const answered = { status, code };
  if (status === 429) {
    const retryAfter = Number(response.headers.get('retry-after'));
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

/** The caller's signal (a client that goes away) and the call's deadline. */
export interface RequestSignals {
  caller?: AbortSignal;
  deadline: AbortSignal;
}

function combined(signals: RequestSignals): AbortSignal {
  return signals.caller ? AbortSignal.any([signals.caller, signals.deadline]) : signals.deadline;
}

async function post(
  provider: Provider,
  path: string,
  body: string | FormData,
  json: boolean,
  signals: RequestSignals,
): Promise<Response> {
  let response: Response;
  try {
    response = await (provider.fetch ?? fetch)(`${provider.baseUrl}${path}`, {
      method: 'POST',
      headers: headers(provider, json),
      body,
      signal: combined(signals),
    });
  } catch (err) {
    throw unanswered(provider, err, signals);
  }
  if (!response.ok) throw await failureOf(provider, response);
  return response;
}

async function readJson(provider: Provider, response: Response, signals: RequestSignals): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    throw unanswered(provider, err, signals);
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

export function isObject(value: unknown): value is Answer {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A chat completion, whole. */
export async function complete(
  provider: Provider,
  body: ChatCompletionBody,
  signals: RequestSignals,
): Promise<Answer> {
  const response = await post(
    provider,
    '/chat/completions',
    JSON.stringify({ ...body, stream: false }),
    true,
    signals,
  );
  const answer = await readJson(provider, response, signals);
  if (!isObject(answer) || !Array.isArray(answer.choices)) {
    throw new ProviderFailure(
      'unavailable',
      `The provider "${provider.name}" answered a completion without choices`,
    );
  }
  return answer;
}

/**
 * A chat completion as the provider streams it, event by event (usage in the last, when the provider
 * gives it). Stops reading, and so cancels the provider's work, when the caller's signal aborts.
 */
export async function* stream(
  provider: Provider,
  body: ChatCompletionBody,
  signals: RequestSignals,
): AsyncGenerator<Answer> {
  const response = await post(
    provider,
    '/chat/completions',
    JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    true,
    signals,
  );
  if (!response.body)
    throw new ProviderFailure('unavailable', `The provider "${provider.name}" answered no stream`);
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      let read: { done: true; value?: undefined } | { done: false; value: Uint8Array };
      try {
        read = await reader.read();
      } catch (err) {
        throw unanswered(provider, err, signals);
      }
      if (read.done) break;
      parser.feed(decoder.decode(read.value, { stream: true }));
      for (const event of events.splice(0)) {
        if (event.data === '[DONE]') return;
        yield parseChunk(provider, event.data);
      }
    }
  } finally {
    // Whether the stream ended, failed or its reader stopped reading: the provider's request ends too.
    await reader.cancel().catch(() => undefined);
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
  let response: Response;
  try {
    response = await (provider.fetch ?? fetch)(`${provider.baseUrl}/models`, {
      headers: headers(provider, false),
      signal: combined(signals),
    });
  } catch (err) {
    throw unanswered(provider, err, signals);
  }
  if (!response.ok) throw await failureOf(provider, response);
  const answer = await readJson(provider, response, signals);
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
  const response = await post(provider, '/audio/transcriptions', form, false, signals);
  const answer = await readJson(provider, response, signals);
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
