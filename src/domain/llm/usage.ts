import type { Store } from '../../store/index.ts';
import { keptErrorText } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { GenerationMetadata, TranscriptionMetadata } from './schemas.ts';

/**
 * The record of bots' model calls: one row per call the provider answered or failed (answers from the
 * cache are not calls), read by getBotAnalytics' `llm` block and the spend cap. A streamed answer ends
 * before its record is written (its caller has every byte of it then): the readers of this process wait
 * for the records under way (`settled`), so that what a caller was answered is counted when it asks.
 */
export class LlmUsage {
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly store: Store) {}

  /** Resolves once every record begun before the call is written or has failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writing]);
  }

  async answered(actor: BotActor, metadata: GenerationMetadata): Promise<void> {
    await this.insert(actor, {
      model: metadata.model ?? metadata.provider,
      input_tokens: metadata.usage.inputTokens,
      output_tokens: metadata.usage.outputTokens,
      cost: metadata.cost,
      latency_ms: Math.round(metadata.latency ?? 0),
      error: null,
    });
  }

  /** A transcription: audio is not counted in tokens, so its record has none; its cost is by the minute. */
  async transcribed(actor: BotActor, metadata: TranscriptionMetadata): Promise<void> {
    await this.insert(actor, {
      model: metadata.model,
      input_tokens: 0,
      output_tokens: 0,
      cost: metadata.cost,
      latency_ms: Math.round(metadata.latency ?? 0),
      error: null,
    });
  }

  /** An embedding request: its texts' tokens are its input, it has no output. */
  async embedded(
    actor: BotActor,
    call: { model: string; inputTokens: number; cost: number; latencyMs: number },
  ): Promise<void> {
    await this.insert(actor, {
      model: call.model,
      input_tokens: call.inputTokens,
      output_tokens: 0,
      cost: call.cost,
      latency_ms: Math.round(call.latencyMs),
      error: null,
    });
  }

  async failed(actor: BotActor, model: string, latencyMs: number, error: string): Promise<void> {
    await this.insert(actor, {
      model,
      input_tokens: 0,
      output_tokens: 0,
      cost: 0,
      latency_ms: Math.round(latencyMs),
      error: keptErrorText(error),
    });
  }

  private async insert(
    actor: BotActor,
    call: {
      model: string;
      input_tokens: number;
      output_tokens: number;
      cost: number;
      latency_ms: number;
      error: string | null;
    },
  ): Promise<void> {
    const written = this.store.db
      .insertInto('llm_calls')
      .values({
        id: newId('llmCall'),
        bot_id: actor.botId,
        workspace_id: actor.workspaceId,
        created_at: nowIso(),
        ...call,
      })
      .execute()
      .then(() => undefined);
    this.writing.add(written);
    try {
      await written;
    } finally {
      this.writing.delete(written);
    }
  }
}
