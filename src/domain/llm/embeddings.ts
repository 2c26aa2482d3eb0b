import type { EmbedCall, TextEmbedder } from '../embeddings/vectors.ts';
import { embeddings, withDeadline } from './openai-compatible.ts';
import type { LlmOptions, ServerProvider } from './providers.ts';
import type { AiSpend } from './spend.ts';
import type { LlmUsage } from './usage.ts';

/** Texts sent in one `POST /embeddings`: OpenAI takes up to 2,048, local servers are slower with many. */
export const EMBEDDING_BATCH = 64;

/**
 * The server provider's embedding model (`PARLEY_EMBEDDINGS_MODEL`), called in batches under the
 * rules of its chat calls: the same connections and address policy, the key never in an error, and the
 * gateway's deadline for each batch. Each request is a model call of the bot it serves (`llm_calls`:
 * its tokens, its cost by the operator's price of the model's input, its latency; its failures too), so
 * indexing and searching by meaning count in the bot's analytics and its workspace's AI spend.
 */
export class Embeddings implements TextEmbedder {
  private readonly provider: (ServerProvider & { embeddingsModel: string }) | undefined;

  constructor(
    private readonly options: LlmOptions,
    private readonly usage: LlmUsage,
    private readonly spend: AiSpend,
  ) {
    const { provider } = options;
    const model = provider?.embeddingsModel;
    this.provider = provider && model !== undefined ? { ...provider, embeddingsModel: model } : undefined;
  }

  /** `default:<model>`, as vectors record it; undefined when no embedding model is configured. */
  get model(): string | undefined {
    return this.provider && `${this.provider.name}:${this.provider.embeddingsModel}`;
  }

  /**
   * The vectors of `texts`, in their order, `EMBEDDING_BATCH` at a time, by the configured model or by
   * an earlier one of the same provider (`call.model`, as vectors record it: the one older vectors are
   * compared with while they are embedded again); throws the provider's failure (a `ProviderFailure`),
   * or when no model is configured.
   */
  async embed(texts: string[], call: EmbedCall): Promise<number[][]> {
    const { provider } = this;
    if (!provider) throw new Error('No embedding model is configured (PARLEY_EMBEDDINGS_MODEL)');
    const ref = call.model ?? `${provider.name}:${provider.embeddingsModel}`;
    const prefix = `${provider.name}:`;
    if (!ref.startsWith(prefix)) throw new Error(`The model "${ref}" is not one of this server's provider`);
    const model = ref.slice(prefix.length);
    const deadlineMs = call.deadlineMs ?? this.options.deadlineMs;
    const price = this.options.prices[ref]?.input ?? 0;
    const vectors: number[][] = [];
    for (let at = 0; at < texts.length; at += EMBEDDING_BATCH) {
      const input = texts.slice(at, at + EMBEDDING_BATCH);
      const started = performance.now();
      const answer = await withDeadline(deadlineMs, undefined, (signals) =>
        embeddings(provider, { model, input }, signals),
      ).catch(async (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        await this.usage.failed(call.actor, ref, performance.now() - started, message);
        throw err;
      });
      const cost = (answer.inputTokens * price) / 1e6;
      const recorded = this.usage.embedded(call.actor, {
        model: ref,
        inputTokens: answer.inputTokens,
        cost,
        latencyMs: performance.now() - started,
      });
      if (call.usageRecords) call.usageRecords.push(recorded);
      else await recorded;
      this.spend.spent(call.actor.workspaceId, cost);
      vectors.push(...answer.vectors);
    }
    return vectors;
  }
}
