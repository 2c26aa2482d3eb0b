import { ApiError } from '../shared/errors.ts';
import { compiledOnFirstUse } from '../shared/json-schema.ts';
import { toJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import { cacheKey } from '../shared/output-cache.ts';
import type { OutputCache } from '../shared/output-cache.ts';
import type { BotActor } from '../workspace/actors.ts';
import { readCompletion, StreamedCompletion } from './chat-response.ts';
import type { Completion } from './chat-response.ts';
import { toProviderRequest } from './chat-request.ts';
import type { ProviderRequest } from './chat-request.ts';
import {
  Cancelled,
  complete,
  Deadline,
  listModels,
  ProviderFailure,
  stream,
  withDeadline,
} from './openai-compatible.ts';
import type { BotModels } from './bot-models.ts';
import { firstThatAnswers, providerError } from './fallbacks.ts';
import type { Attempt } from './fallbacks.ts';
import { NOT_CONFIGURED, resolveModel } from './providers.ts';
import type { LlmOptions, ModelChoice, Provider, Routes, ServerProvider } from './providers.ts';
import type { LlmProviders } from './workspace-providers.ts';
import type { LlmUsage } from './usage.ts';
import type { AiSpend } from './spend.ts';
import { GenerationResponseSchema } from './schemas.ts';
import type {
  GenerationChunk,
  GenerationMetadata,
  GenerationRequest,
  GenerationResponse,
  Model,
} from './schemas.ts';

/** How long an answer is kept for the same request, and for the same idempotency key. */
const RESPONSE_CACHE_SECONDS = 3_600;
const REQUEST_ID_SECONDS = 86_400;
/** How long the provider's model list is kept. */
const MODEL_LIST_MS = 60_000;
/** The limits a model is described with when the provider does not say (as the hosted client assumes). */
const DEFAULT_INPUT_TOKENS = 128_000;
const DEFAULT_OUTPUT_TOKENS = 8_192;

/** The model references of a request, first choice first (a fallback array, `{id}` or a string; `best` when absent). */
function modelRefs(request: GenerationRequest): string[] {
  const { model } = request;
  if (model === undefined) return ['best'];
  if (typeof model === 'string') return [model];
  if (Array.isArray(model)) return model;
  return [model.id];
}

/**
 * The LLM gateway: generation requests of the Cognitive API and of the `llm` interface, answered by the
 * operator's OpenAI-compatible provider or one of the bot's workspace's (`providers`), with model
 * selectors (the bot's own choices first, `botModels`) and fallbacks, a response cache and idempotency
 * keys, one deadline per call, and errors the official clients retry or fall back on.
 */
export class LlmGateway {
  private models: { ids: Promise<string[]>; at: number } | undefined;

  constructor(
    private readonly options: LlmOptions,
    private readonly outputs: OutputCache,
    private readonly usage: LlmUsage,
    private readonly spend: AiSpend,
    private readonly providers: LlmProviders,
    private readonly botModels: BotModels,
  ) {}

  /**
   * The error a failed call answers, once recorded: a caller that went away gets a cancellation, not
   * recorded (nothing was asked of the provider for it); an API error is recorded against `model`.
   */
  private async failed(actor: BotActor, model: string, started: number, err: unknown): Promise<unknown> {
    if (err instanceof Cancelled) return new ApiError('Runtime', 'The request was cancelled');
    if (err instanceof ApiError)
      await this.usage.failed(actor, model, performance.now() - started, err.message);
    return err;
  }

  /** Whether the bots of a workspace have a provider: the server's, or one of the workspace's own. */
  async configuredFor(workspaceId: string): Promise<boolean> {
    if (this.options.provider !== undefined) return true;
    return (await this.providers.forWorkspace(workspaceId)).size > 0;
  }

  /** Where this bot's model references lead. */
  private async routes(actor: BotActor): Promise<Routes> {
    const [workspace, bot] = await Promise.all([
      this.providers.forWorkspace(actor.workspaceId),
      this.botModels.of(actor.botId),
    ]);
    return { server: this.options.provider, workspace, bot };
  }

  /** A workspace's provider is priced by its own table; the server's by the operator's. */
  private price(provider: Provider, model: string) {
    return provider.prices ? provider.prices[model] : this.options.prices[`${provider.name}:${model}`];
  }

  private cost(choice: ModelChoice, inputTokens: number, outputTokens: number) {
    const price = this.price(choice.provider, choice.model);
    const inputCost = price ? (inputTokens * price.input) / 1e6 : 0;
    const outputCost = price ? (outputTokens * price.output) / 1e6 : 0;
    return { usage: { inputTokens, inputCost, outputTokens, outputCost }, cost: inputCost + outputCost };
  }

  private metadata(
    attempt: Attempt,
    completion: Completion,
    times: { started: number; firstToken: number | undefined },
    request: GenerationRequest,
    providerRequest: ProviderRequest,
  ): GenerationMetadata {
    const inputTokens =
      completion.inputTokens ?? estimateTokens(JSON.stringify(providerRequest.body.messages));
    const outputTokens = completion.outputTokens ?? estimateTokens(completion.text);
    const warnings = [...providerRequest.warnings, ...attempt.warnings, ...completion.warnings];
    const now = performance.now();
    return {
      ...(request.options?.requestId !== undefined && { requestId: request.options.requestId }),
      provider: attempt.choice.provider.name,
      model: attempt.choice.ref,
      ...this.cost(attempt.choice, inputTokens, outputTokens),
      cached: false,
      latency: Math.round(now - times.started),
      ...(times.firstToken !== undefined && { ttft: Math.round(times.firstToken - times.started) }),
      stopReason: completion.stopReason,
      ...(warnings.length > 0 && { warnings }),
      ...(attempt.fallbackPath.length > 0 && { fallbackPath: attempt.fallbackPath }),
    };
  }

  /**
   * The keys under which an answer to this request is kept: its idempotency key, and its content with
   * the models that may answer it, each by its provider's identity (kept per bot besides).
   */
  private cacheKeys(request: GenerationRequest, providerRequest: ProviderRequest, choices: ModelChoice[]) {
    const requestId = request.options?.requestId;
    return {
      byRequestId: requestId === undefined ? undefined : `llm:request:${cacheKey(requestId)}`,
      byContent: request.options?.skipCache
        ? undefined
        : `llm:content:${cacheKey(
            providerRequest.body,
            choices.map((c) => `${c.provider.id}:${c.model}`),
          )}`,
    };
  }

  /**
   * The answer kept for the request id, else for the content. Both are read at once: on PostgreSQL a
   * request with an id and a new content waited for two round trips, one after the other, before its
   * provider was asked.
   */
  private async remembered(botId: string, keys: { byRequestId?: string; byContent?: string }) {
    const read = async (key: string | undefined) =>
      key === undefined ? undefined : this.outputs.get(botId, key);
    const kept = await Promise.all([read(keys.byRequestId), read(keys.byContent)]);
    for (const output of kept) {
      const response = output && asCached(output);
      if (response) return response;
    }
    return undefined;
  }

  private async remember(
    botId: string,
    keys: { byRequestId?: string; byContent?: string },
    response: GenerationResponse,
  ) {
    if (!keys.byRequestId && !keys.byContent) return;
    const output = toJsonObject(response);
    await Promise.all([
      keys.byRequestId && this.outputs.set(botId, keys.byRequestId, output, REQUEST_ID_SECONDS),
      keys.byContent && this.outputs.set(botId, keys.byContent, output, RESPONSE_CACHE_SECONDS),
    ]);
  }

  private async prepare(actor: BotActor, request: GenerationRequest) {
    const routes = await this.routes(actor);
    const choices = modelRefs(request).map((ref) => resolveModel(routes, ref));
    await this.spend.check(actor.workspaceId);
    const providerRequest = toProviderRequest(request);
    return { providerRequest, choices };
  }

  /** A generation, whole. */
  async generate(
    actor: BotActor,
    request: GenerationRequest,
    caller?: AbortSignal,
  ): Promise<GenerationResponse> {
    const { providerRequest, choices } = await this.prepare(actor, request);
    const keys = this.cacheKeys(request, providerRequest, choices);
    const hit = await this.remembered(actor.botId, keys);
    if (hit) return hit;
    const started = performance.now();
    const response = await withDeadline(this.options.deadlineMs, caller, (signals) =>
      firstThatAnswers(choices, async (attempt) => {
        const answer = await complete(
          attempt.choice.provider,
          { ...providerRequest.body, model: attempt.choice.model },
          signals,
        );
        const completion = readCompletion(answer);
        return {
          output: completion.text,
          ...(completion.reasoning && { reasoning: completion.reasoning }),
          ...(completion.toolCalls.length > 0 && { toolCalls: completion.toolCalls }),
          metadata: this.metadata(
            attempt,
            completion,
            { started, firstToken: undefined },
            request,
            providerRequest,
          ),
        };
      }),
    ).catch(async (err: unknown) => {
      throw await this.failed(actor, choices[0]?.ref ?? '', started, err);
    });
    this.spend.spent(actor.workspaceId, response.metadata.cost);
    await this.recordAndKeep(actor, keys, response);
    return response;
  }

  /**
   * A generation as it streams: text as the provider sends it, and last a chunk with `finished` and the
   * metadata, in batches: the chunks of the provider's events that came together, each event's text a
   * chunk of its own. A model may fall back to the next only before its first token; a
   * failure after it ends the stream with the error (the caller sees an incomplete answer, never a
   * wrong one). The provider's request is cancelled when the caller goes away.
   */
  async *generateStream(
    actor: BotActor,
    request: GenerationRequest,
    caller?: AbortSignal,
  ): AsyncGenerator<GenerationChunk[]> {
    const { providerRequest, choices } = await this.prepare(actor, request);
    const keys = this.cacheKeys(request, providerRequest, choices);
    const hit = await this.remembered(actor.botId, keys);
    if (hit) {
      yield [
        {
          output: hit.output,
          ...(hit.toolCalls && { toolCalls: hit.toolCalls }),
          created: Date.now(),
          finished: true,
          metadata: hit.metadata,
        },
      ];
      return;
    }
    const deadline = new Deadline(this.options.deadlineMs);
    const signals = { caller, deadline: deadline.signal };
    const started = performance.now();
    const assembled = new StreamedCompletion();
    let firstToken: number | undefined;
    let attempt: Attempt | undefined;
    try {
      // The first events are awaited under the fallback rule; the rest stream from the model that sent them.
      const opened = await firstThatAnswers(choices, async (tried) => {
        const events = stream(
          tried.choice.provider,
          { ...providerRequest.body, model: tried.choice.model },
          signals,
        );
        const first = await events.next();
        return { tried, events, first };
      }).catch(async (err: unknown) => {
        throw await this.failed(actor, choices[0]?.ref ?? '', started, err);
      });
      attempt = opened.tried;
      const { events } = opened;
      try {
        for (let next = opened.first; !next.done; next = await events.next()) {
          const created = Date.now();
          const chunks: GenerationChunk[] = [];
          for (const event of next.value) {
            const { output, reasoning } = assembled.add(event);
            if (output === '' && reasoning === '') continue;
            chunks.push({ ...(output && { output }), ...(reasoning && { reasoning }), created });
          }
          if (chunks.length === 0) continue;
          firstToken ??= performance.now();
          yield chunks;
        }
      } catch (err) {
        if (err instanceof Cancelled) return;
        const failure = err instanceof ProviderFailure ? providerError(err, attempt.choice) : err;
        throw await this.failed(actor, attempt.choice.ref, started, failure);
      } finally {
        await events.return(undefined);
      }
    } finally {
      deadline.release();
    }
    const completion = assembled.done();
    const metadata = this.metadata(attempt, completion, { started, firstToken }, request, providerRequest);
    const response: GenerationResponse = {
      output: completion.text,
      ...(completion.reasoning && { reasoning: completion.reasoning }),
      ...(completion.toolCalls.length > 0 && { toolCalls: completion.toolCalls }),
      metadata,
    };
    this.spend.spent(actor.workspaceId, metadata.cost);
    // What a request after this one relies on (its idempotency key, the cache) is kept before the last
    // chunk; the call's record after it: the caller's answer may end with the last chunk (as the
    // Cognitive API's does), not waiting for a write that is the server's own (on PostgreSQL a commit).
    await this.remember(actor.botId, keys, response);
    yield [
      {
        ...(completion.toolCalls.length > 0 && { toolCalls: completion.toolCalls }),
        created: Date.now(),
        finished: true,
        metadata,
      },
    ];
    await this.usage.answered(actor, metadata);
  }

  /**
   * The call's record and the answer kept for its keys, written at once: on SQLite the writes share a
   * commit, on PostgreSQL they go out together, where one after the other each waited for its own (the
   * AI cards' turns waited for both before their reply).
   */
  private async recordAndKeep(
    actor: BotActor,
    keys: { byRequestId?: string; byContent?: string },
    response: GenerationResponse,
  ): Promise<void> {
    await Promise.all([
      this.usage.answered(actor, response.metadata),
      this.remember(actor.botId, keys, response),
    ]);
  }

  /**
   * The models a bot may name: the server provider's, as `default:<id>`, then its workspace's, as
   * `<name>:<id>`, with the bot's `best` and `fast` marked, the best one first. Their tags rank them as
   * the hosted client ranks models for `best` and `fast` (it sorts by score, keeping the list's order
   * between equals): both are `recommended` and `general-purpose`, and only the fast one `low-cost`,
   * which counts for `fast` alone.
   */
  async listModels(actor: BotActor): Promise<Model[]> {
    const routes = await this.routes(actor);
    const listed = await this.listed(actor.workspaceId);
    if (listed.length === 0) throw new ApiError('Runtime', NOT_CONFIGURED);
    const selected = (selector: string) => {
      try {
        return resolveModel(routes, selector).ref;
      } catch {
        return undefined;
      }
    };
    const best = selected('best');
    const fast = selected('fast');
    const models = listed.map(({ provider, id }) => this.describe(provider, id, { best, fast }));
    return [...models.filter((model) => model.id === best), ...models.filter((model) => model.id !== best)];
  }

  /** The `<provider>:<model>` references a bot of the workspace may choose for `best` and `fast`. */
  async catalog(workspaceId: string): Promise<string[]> {
    return (await this.listed(workspaceId)).map(({ provider, id }) => `${provider.name}:${id}`);
  }

  /** Every model of the server's provider and of the workspace's, once each. */
  private async listed(workspaceId: string): Promise<{ provider: Provider; id: string }[]> {
    const server = this.options.provider;
    const serverIds = server
      ? [...new Set([server.bestModel, server.fastModel, ...(await this.serverModels(server))])]
      : [];
    const [workspace, modelsOf] = await Promise.all([
      this.providers.forWorkspace(workspaceId),
      this.providers.modelsOf(workspaceId),
    ]);
    return [
      ...(server ? serverIds.map((id) => ({ provider: server, id })) : []),
      ...[...modelsOf].flatMap(([name, ids]) => {
        const provider = workspace.get(name);
        return provider ? ids.map((id) => ({ provider, id })) : [];
      }),
    ];
  }

  private describe(
    provider: Provider,
    id: string,
    selected: { best: string | undefined; fast: string | undefined },
  ): Model {
    const ref = `${provider.name}:${id}`;
    const price = this.price(provider, id);
    const isBest = ref === selected.best;
    const isFast = ref === selected.fast;
    const tags = [
      ...(isBest || isFast ? ['recommended', 'general-purpose'] : []),
      ...(isFast ? ['low-cost'] : []),
    ];
    return {
      id: ref,
      name: id,
      description: `${id} on the provider "${provider.name}"`,
      aliases: [...(isBest ? ['best', 'auto'] : []), ...(isFast ? ['fast'] : [])],
      tags,
      input: { maxTokens: DEFAULT_INPUT_TOKENS, costPer1MTokens: price?.input ?? 0 },
      output: { maxTokens: DEFAULT_OUTPUT_TOKENS, costPer1MTokens: price?.output ?? 0 },
      lifecycle: 'production',
    };
  }

  /** The server provider's model ids, read at most once a minute; a provider that cannot say lists none. */
  private async serverModels(provider: ServerProvider): Promise<string[]> {
    const now = Date.now();
    if (!this.models || now - this.models.at > MODEL_LIST_MS) {
      const ids = withDeadline(this.options.deadlineMs, undefined, (signals) =>
        listModels(provider, signals),
      ).catch((err: unknown) => {
        if (err instanceof ProviderFailure) return [];
        throw err;
      });
      this.models = { ids, at: now };
    }
    return this.models.ids;
  }
}

/** About four characters a token: what is metered when a provider does not count. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const isResponse = compiledOnFirstUse<GenerationResponse>(GenerationResponseSchema);

/** A kept answer, marked as answered from the cache; undefined if it is not one (kept by another version). */
function asCached(kept: JsonObject): GenerationResponse | undefined {
  if (!isResponse(kept)) return undefined;
  return { ...kept, metadata: { ...kept.metadata, cached: true } };
}
