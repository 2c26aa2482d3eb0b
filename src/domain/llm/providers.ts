import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { ApiError } from '../shared/errors.ts';
import type { Warning } from './schemas.ts';

/** The name of the server-wide provider of the settings: `default:<model>` routes to it. */
export const DEFAULT_PROVIDER = 'default';

export const NOT_CONFIGURED =
  'LLM not configured: set PARLEY_LLM_BASE_URL (an OpenAI-compatible endpoint), PARLEY_LLM_BEST_MODEL and PARLEY_LLM_FAST_MODEL (and PARLEY_LLM_API_KEY if it wants one) on the server, or add a provider to the workspace and choose the bot’s models';

/** The price of a model's tokens, in US dollars per million; of a transcription model's audio, per minute. */
export interface ModelPrice {
  input: number;
  output: number;
  perMinute?: number;
}

/**
 * How requests reach a provider: kept-alive agents whose connections look names up under a rule, and
 * the same rule for a literal address (connected to without a lookup).
 */
export interface ProviderConnections {
  agents: { http: HttpAgent; https: HttpsAgent };
  /** Why a connection to this address may not be made, or undefined when it may. */
  refusal(address: string): string | undefined;
}

/** An OpenAI-compatible endpoint. */
export interface Provider {
  /**
   * What makes it one: `default`, or a workspace provider's row id (a provider deleted and made again
   * under its name is another, whose answers are not the old one's).
   */
  id: string;
  name: string;
  /** Ends before `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; never written to a log or an error. */
  apiKey: string | undefined;
  /**
   * How it is connected to: a workspace's under the address policy of tenants' targets; absent, the
   * server's own agents (the operator's provider, which may be on loopback or a private network).
   */
  connections?: ProviderConnections;
  /** Its own prices, by model id (a workspace's); absent: the operator's, by `provider:model`. */
  prices?: Record<string, ModelPrice>;
}

/** The server's provider, and the models that serve `best` and `fast` there. */
export interface ServerProvider extends Provider {
  bestModel: string;
  fastModel: string;
  /** The model of `POST /audio/transcriptions` that answers `auto`, `best` and `fast` (TRANSCRIPTION_MODEL when absent). */
  transcriptionModel?: string;
  /** The model of `POST /embeddings` that embeds passages and queries; absent: full-text search alone. */
  embeddingsModel?: string;
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

/** Where one bot's model references lead: the server's provider, its workspace's, and its own choices. */
export interface Routes {
  server: ServerProvider | undefined;
  /** The workspace's providers, by name. */
  workspace: ReadonlyMap<string, Provider>;
  /** The bot's `best` and `fast`, as `<provider>:<model>`; null: the server's. */
  bot: { best: string | null; fast: string | null };
}

function choice(provider: Provider, model: string, warning?: Warning): ModelChoice {
  return { provider, model, ref: `${provider.name}:${model}`, ...(warning && { warning }) };
}

/** `<provider>:<model>` of a provider the bot has (the server's or its workspace's), else undefined. */
function named(routes: Routes, ref: string): ModelChoice | undefined {
  const colon = ref.indexOf(':');
  if (colon <= 0 || colon === ref.length - 1) return undefined;
  const name = ref.slice(0, colon);
  const model = ref.slice(colon + 1);
  if (name === DEFAULT_PROVIDER) return routes.server && choice(routes.server, model);
  const provider = routes.workspace.get(name);
  return provider && choice(provider, model);
}

/**
 * The model a selector names for this bot: its own choice; else the server's; else, with no server
 * provider, the bot's other choice (a bot that chose only `best` is answered by it for `fast` too).
 */
function selected(routes: Routes, selector: 'best' | 'fast'): ModelChoice {
  const other = selector === 'best' ? 'fast' : 'best';
  const own = routes.bot[selector];
  const ownChoice = own === null ? undefined : named(routes, own);
  if (ownChoice) return ownChoice;
  const { server } = routes;
  if (server) return choice(server, selector === 'best' ? server.bestModel : server.fastModel);
  const fallback = routes.bot[other];
  const fallbackChoice = fallback === null ? undefined : named(routes, fallback);
  if (fallbackChoice) return fallbackChoice;
  throw new ApiError('Runtime', NOT_CONFIGURED);
}

/**
 * The model a reference names: `best`, `fast` or `auto` (the bot's choices, else the server's);
 * `<provider>:<model>` on the server's provider (`default`) or one of the workspace's; a bare model id
 * on the server's provider. A reference to a provider the bot does not have (`openai:gpt-4o`, as bots
 * written for the hosted platform send) is answered by the best model, with a warning saying so: such a
 * bot runs on the operator's or its workspace's models unchanged.
 */
export function resolveModel(routes: Routes, ref: string): ModelChoice {
  if (ref === 'best' || ref === 'auto') return selected(routes, 'best');
  if (ref === 'fast') return selected(routes, 'fast');
  const direct = named(routes, ref);
  if (direct) return direct;
  if (!ref.includes(':') && routes.server) return choice(routes.server, ref);
  const best = selected(routes, 'best');
  return {
    ...best,
    warning: {
      type: 'fallback_used',
      message: `The model "${ref}" is not served here: "${best.ref}" (best) answered instead`,
    },
  };
}

export interface LlmOptions {
  /** The server-wide provider; undefined: only workspaces' own providers answer. */
  provider: ServerProvider | undefined;
  /** The longest a call may take, every fallback included. */
  deadlineMs: number;
  /** Prices of the server's models by `provider:model`; a model without one costs nothing. */
  prices: Record<string, ModelPrice>;
}
