import { createHash } from 'node:crypto';
import { ApiError } from '../shared/errors.ts';
import { compiledOnFirstUse } from '../shared/json-schema.ts';
import { toJsonObject } from '../shared/json.ts';
import { cacheKey } from '../shared/output-cache.ts';
import type { OutputCache } from '../shared/output-cache.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Audio, AudioSource } from './audio-source.ts';
import { firstThatAnswers } from './fallbacks.ts';
import { Deadline, ProviderFailure, transcribe } from './openai-compatible.ts';
import { NOT_CONFIGURED, resolveModel, TRANSCRIPTION_MODEL } from './providers.ts';
import type { LlmOptions, ModelChoice, Provider, ServerProvider } from './providers.ts';
import { TranscriptionResponseSchema } from './schemas.ts';
import type { TranscriptionRequest, TranscriptionResponse } from './schemas.ts';
import type { AiSpend } from './spend.ts';
import type { LlmUsage } from './usage.ts';

/** How long a transcription is kept for the same audio, and for the same idempotency key (as generations). */
const RESPONSE_CACHE_SECONDS = 3_600;
const REQUEST_ID_SECONDS = 86_400;

const SELECTORS = new Set(['auto', 'best', 'fast']);

/**
 * The model a transcription's reference names: `auto`, `best` and `fast` (and a model of a provider this
 * server does not have, as `openai:whisper-1` from a bot written for the hosted platform) are the
 * provider's transcription model; `default:<model>` or a bare id that model.
 */
function transcriptionChoice(provider: ServerProvider, ref: string): ModelChoice {
  // The server's provider alone: workspaces' own providers and bots' choices name chat models.
  const chosen = resolveModel(
    { server: provider, workspace: new Map(), bot: { best: null, fast: null } },
    ref,
  );
  if (!SELECTORS.has(ref) && chosen.warning === undefined) return chosen;
  const model = provider.transcriptionModel ?? TRANSCRIPTION_MODEL;
  return { provider, model, ref: `${provider.name}:${model}` };
}

/**
 * A provider that has no `/audio/transcriptions` at all answers 404 about the path, not about the model
 * (which a 404 of an unknown model names, or says with OpenAI's `model_not_found` code).
 */
function transcriptionsMissing(err: unknown, choice: ModelChoice): boolean {
  return (
    err instanceof ProviderFailure &&
    err.answered?.status === 404 &&
    err.answered.code !== 'model_not_found' &&
    !err.message.includes(choice.model)
  );
}

function notOffered(provider: Provider): ApiError {
  return new ApiError(
    'Runtime',
    `Audio transcription is not offered by the provider "${provider.name}": it has no POST /audio/transcriptions (404). Point PARLEY_LLM_BASE_URL at a server that has one (OpenAI, or vLLM, LocalAI or speaches with a Whisper model) and name its model with PARLEY_LLM_TRANSCRIPTION_MODEL`,
  );
}

/**
 * `transcribe-audio`: speech to text through the provider's OpenAI-compatible `/audio/transcriptions`,
 * with the gateway's rules: fallback arrays, one deadline per call (the audio's download included), the
 * workspace's spend cap, a cache by the audio's content and idempotency keys, every call metered.
 */
export class Transcriptions {
  constructor(
    private readonly options: LlmOptions,
    private readonly source: AudioSource,
    private readonly outputs: OutputCache,
    private readonly usage: LlmUsage,
    private readonly spend: AiSpend,
  ) {}

  async transcribe(actor: BotActor, request: TranscriptionRequest): Promise<TranscriptionResponse> {
    const { provider } = this.options;
    if (!provider) throw new ApiError('Runtime', NOT_CONFIGURED);
    await this.spend.check(actor.workspaceId);
    const refs = request.model === undefined ? ['auto'] : [request.model].flat();
    const choices = refs.map((ref) => transcriptionChoice(provider, ref));
    const requestId = request.options?.requestId;
    const byRequestId = requestId === undefined ? undefined : `llm:transcription:${cacheKey(requestId)}`;
    const kept = byRequestId && (await this.remembered(actor.botId, byRequestId));
    if (kept) return kept;

    // One deadline for the whole call, the audio's download included.
    const deadline = new Deadline(this.options.deadlineMs);
    try {
      return await this.answer(actor, request, choices, byRequestId, deadline.signal);
    } finally {
      deadline.release();
    }
  }

  private async answer(
    actor: BotActor,
    request: TranscriptionRequest,
    choices: ModelChoice[],
    byRequestId: string | undefined,
    deadline: AbortSignal,
  ): Promise<TranscriptionResponse> {
    const requestId = request.options?.requestId;
    const started = performance.now();
    const audio = await this.source.read(request.url, request.mimeType, deadline).catch((err: unknown) => {
      if (deadline.aborted) throw new ApiError('OperationTimeout', 'The audio was not read in time');
      throw err;
    });
    const byContent = request.options?.skipCache
      ? undefined
      : `llm:transcription:${cacheKey(
          createHash('sha256').update(audio.bytes).digest('hex'),
          choices.map((c) => c.ref),
        )}`;
    const cached = byContent && (await this.remembered(actor.botId, byContent));
    if (cached) return cached;

    const response = await firstThatAnswers(choices, (attempt) =>
      this.attempt(attempt.choice, audio, deadline).then(
        ({ text, durationSeconds = 0 }): TranscriptionResponse => ({
          output: text,
          metadata: {
            ...(requestId !== undefined && { requestId }),
            provider: attempt.choice.provider.name,
            model: attempt.choice.ref,
            cost: this.cost(attempt.choice.ref, durationSeconds),
            durationSeconds,
            latency: Math.round(performance.now() - started),
            cached: false,
            ...(attempt.fallbackPath.length > 0 && { fallbackPath: attempt.fallbackPath }),
          },
        }),
      ),
    ).catch(async (err: unknown) => {
      if (err instanceof ApiError)
        await this.usage.failed(actor, choices[0]?.ref ?? '', performance.now() - started, err.message);
      throw err;
    });
    const { metadata } = response;
    await this.usage.transcribed(actor, metadata);
    this.spend.spent(actor.workspaceId, metadata.cost);
    const output = toJsonObject(response);
    if (byRequestId) await this.outputs.set(actor.botId, byRequestId, output, REQUEST_ID_SECONDS);
    if (byContent) await this.outputs.set(actor.botId, byContent, output, RESPONSE_CACHE_SECONDS);
    return response;
  }

  private async attempt(choice: ModelChoice, audio: Audio, deadline: AbortSignal) {
    try {
      return await transcribe(choice.provider, { ...audio, model: choice.model }, { deadline });
    } catch (err) {
      // Every other model would be refused the same: the call ends here, saying what is missing.
      if (transcriptionsMissing(err, choice)) throw notOffered(choice.provider);
      throw err;
    }
  }

  private cost(ref: string, durationSeconds: number): number {
    const perMinute = this.options.prices[ref]?.perMinute ?? 0;
    return (durationSeconds / 60) * perMinute;
  }

  private async remembered(botId: string, key: string): Promise<TranscriptionResponse | undefined> {
    const kept = await this.outputs.get(botId, key);
    if (!kept || !isResponse(kept)) return undefined;
    return { ...kept, metadata: { ...kept.metadata, cached: true } };
  }
}

const isResponse = compiledOnFirstUse<TranscriptionResponse>(TranscriptionResponseSchema);
