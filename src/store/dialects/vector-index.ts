import type { PassageType } from '../../value-sets.ts';
import type { Executor } from '../executor.ts';

/** A stored vector a search may rank: its item's id (a passage's, a table row's) and its bytes. */
export interface VectorCandidate {
  id: string;
  vector: Uint8Array;
}

/** Which stored vectors a search ranks by meaning, and the signature of its query (vectors/signature.ts). */
export type VectorRequest = (
  | {
      /** Files' passages (`passage_vectors`) of these files, of the bot that owns them. */
      source: 'passages';
      botId: string;
      fileIds: readonly string[];
      /** Passages of these types are not answered (headings, for answers that stand alone). */
      excludedTypes: readonly PassageType[];
    }
  | {
      /** A table's rows (`row_vectors`). */
      source: 'rows';
      tableId: string;
    }
) & {
  model: string;
  signature: Uint8Array;
  /** How many candidates the index gives, nearest by signature first; the exact scan gives them all. */
  limit: number;
};

/** What finds the candidates: an index (which, on this store), or every vector (`exact`). */
export type VectorIndexKind = 'sqlite-vec' | 'signature-scan' | 'signature-cache' | 'exact';

/**
 * The stored vectors closest to a query, for the domain to rank exactly (cosine similarity): an index
 * answers the `limit` whose signatures are nearest the query's (a few hundred of 100,000, in
 * milliseconds), the exact fallback every vector of the request. The index is kept by the database in
 * the transaction that writes or deletes the vectors (triggers), so it never answers a vector gone.
 */
export interface VectorIndex {
  readonly kind: VectorIndexKind;
  candidates(db: Executor, request: VectorRequest): Promise<VectorCandidate[]>;
}
