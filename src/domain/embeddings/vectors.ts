import { createHash } from 'node:crypto';
import type { BotActor } from '../workspace/actors.ts';

/**
 * Embeddings (of files' passages, of table rows) as the store keeps them: scaled to length 1 (so that
 * cosine similarity is a dot product) and written as little-endian float32 bytes (store/vectors/bytes.ts),
 * with their signature (store/vectors/signature.ts) for the vector indexes.
 */

/** One call of the embedder: for whom (the call is counted as theirs), with which model, how long. */
export interface EmbedCall {
  actor: BotActor;
  /** The model as vectors record it (`default:<model>`); absent: the one configured now. */
  model?: string | undefined;
  /** Bounds each request to the provider. */
  deadlineMs?: number;
  /**
   * Given: the records of the call's use are written while the caller goes on, and left here for it to
   * await before it answers (a search reads its candidates meanwhile). Absent: awaited before the vectors
   * are answered.
   */
  usageRecords?: Promise<void>[];
}

/** What embeds texts: the gateway's embedding model, when one is configured. */
export interface TextEmbedder {
  /** The model, as vectors record it (`default:<model>`); undefined: none is configured. */
  readonly model: string | undefined;
  /** The vectors of `texts`, in their order. */
  embed(texts: string[], call: EmbedCall): Promise<number[][]>;
}

export const NO_EMBEDDER: TextEmbedder = {
  model: undefined,
  embed: () => Promise.reject(new Error('No embedding model is configured')),
};

/** The hash a text is known by: the same text embedded once per bot and model. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function unitVector(vector: readonly number[]): Float32Array {
  const length = Math.hypot(...vector);
  return Float32Array.from(vector, (value) => (length === 0 ? 0 : value / length));
}

/** The cosine similarity of two unit vectors of the same length. */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}
