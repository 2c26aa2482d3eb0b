import type { Warning } from './schemas.ts';

/** The name of the server-wide provider of the settings: `default:<model>` routes to it. */
export const DEFAULT_PROVIDER = 'default';

/** An OpenAI-compatible endpoint and the models that serve `best` and `fast` there. */
export interface Provider {
  name: string;
  /** Ends before `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; never written to a log or an error. */
  apiKey: string | undefined;
  bestModel: string;
  fastModel: string;
  /** The model of `POST /audio/transcriptions` that answers `auto`, `best` and `fast` (TRANSCRIPTION_MODEL when absent). */
  transcriptionModel?: string;
}

/** OpenAI's speech-to-text model, the name OpenAI-compatible servers commonly serve Whisper under. */
export const TRANSCRIPTION_MODEL = 'whisper-1';

/** A model of a provider, as a request's model reference resolved. */
export interface ModelChoice {
  provider: Provider;
  model: string;
  /** `provider:model`, as answers and `fallbackPath` name it. */
  ref: string;
  /** What the caller should know about the choice (a model reference this server does not serve). */
  warning?: Warning;
}

/** The selectors the hosted platform gives bots besides `provider:model`; `auto` means best. */
const SELECTORS = { best: 'bestModel', auto: 'bestModel', fast: 'fastModel' } as const;

function isSelector(ref: string): ref is keyof typeof SELECTORS {
  return Object.hasOwn(SELECTORS, ref);
}

function choice(provider: Provider, model: string, warning?: Warning): ModelChoice {
  return { provider, model, ref: `${provider.name}:${model}`, ...(warning && { warning }) };
}

/**
 * The model a reference names: `best`, `fast` or `auto`; `default:<model>` (or a bare model id) on the
 * server's provider. A reference to a provider this server does not have (`openai:gpt-4o`, as bots
 * written for the hosted platform send) is answered by the best model, with a warning saying so: such a
 * bot runs on the operator's models unchanged.
 */
export function resolveModel(provider: Provider, ref: string): ModelChoice {
  if (isSelector(ref)) return choice(provider, provider[SELECTORS[ref]]);
  const colon = ref.indexOf(':');
  if (colon < 0) return choice(provider, ref);
  const name = ref.slice(0, colon);
  const model = ref.slice(colon + 1);
  if (name === provider.name && model !== '') return choice(provider, model);
  return choice(provider, provider.bestModel, {
    type: 'fallback_used',
    message: `The model "${ref}" is not served here: "${provider.name}:${provider.bestModel}" (best) answered instead`,
  });
}

/** The price of a model's tokens, in US dollars per million; of a transcription model's audio, per minute. */
export interface ModelPrice {
  input: number;
  output: number;
  perMinute?: number;
}

export interface LlmOptions {
  /** The server-wide provider; undefined: no model is configured and every call says so. */
  provider: Provider | undefined;
  /** The longest a call may take, every fallback included. */
  deadlineMs: number;
  /** Prices by `provider:model`; a model without one costs nothing. */
  prices: Record<string, ModelPrice>;
}
