import { embeddings } from './openai-compatible.ts';
import type { LlmOptions, ServerProvider } from './providers.ts';

/** Texts sent in one `POST /embeddings`: OpenAI takes up to 2,048, local servers are slower with many. */
export const EMBEDDING_BATCH = 64;

/**
 * The server provider's embedding model (`PARLEY_EMBEDDINGS_MODEL`), called in batches under the
 * rules of its chat calls: the same connections and address policy, the key never in an error, and the
 * gateway's deadline for each batch.
 */
export class Embeddings {
  private readonly provider: (ServerProvider & { embeddingsModel: string }) | undefined;

  constructor(private readonly options: LlmOptions) {
    const { provider } = options;
    const model = provider?.embeddingsModel;
    this.provider = provider && model !== undefined ? { ...provider, embeddingsModel: model } : undefined;
  }

  /** `default:<model>`, as vectors record it; undefined when no embedding model is configured. */
  get model(): string | undefined {
    return this.provider && `${this.provider.name}:${this.provider.embeddingsModel}`;
  }

  /**
   * The vectors of `texts`, in their order, `EMBEDDING_BATCH` at a time; throws the provider's failure
   * (a `ProviderFailure`), or when no model is configured. `deadlineMs` bounds each batch.
   */
  async embed(texts: string[], deadlineMs = this.options.deadlineMs): Promise<number[][]> {
    const { provider } = this;
    if (!provider) throw new Error('No embedding model is configured (PARLEY_EMBEDDINGS_MODEL)');
    const vectors: number[][] = [];
    for (let at = 0; at < texts.length; at += EMBEDDING_BATCH) {
      const input = texts.slice(at, at + EMBEDDING_BATCH);
      const deadline = AbortSignal.timeout(deadlineMs);
      vectors.push(...(await embeddings(provider, { model: provider.embeddingsModel, input }, { deadline })));
    }
    return vectors;
  }
}
