import type { SearchHit, VectorCandidate } from '../../store/index.ts';
import { fromBytes } from '../../store/vectors/bytes.ts';
import { vectorSignature } from '../../store/vectors/signature.ts';
import type { SearchRanking } from '../../value-sets.ts';
import type { BotActor } from '../workspace/actors.ts';
import { dot, unitVector } from './vectors.ts';
import type { TextEmbedder } from './vectors.ts';

/** The longest a search waits for its query's embedding before it answers by words alone. */
const QUERY_DEADLINE_MS = 10_000;

/**
 * The stored vectors of `model` closest to a search's query (at most `depth`, best first): the store's
 * vector index gives the candidates nearest the query's signature (`candidatesFor(depth)` of them; every
 * vector where it has no index), ranked here by exact cosine similarity. None when the query cannot be
 * embedded (the provider is down or slow: `onFallback` is told, and the search answers by its words), or
 * embeds to nothing.
 */
export async function closestToQuery(
  embedder: TextEmbedder,
  search: { actor: BotActor; query: string; model: string; depth: number },
  candidates: (query: { signature: Uint8Array; limit: number }) => Promise<VectorCandidate[]>,
  onFallback: (fallback: SearchFallback) => void,
): Promise<SearchHit[]> {
  const { actor, query, model, depth } = search;
  let vector: number[] | undefined;
  try {
    [vector] = await embedder.embed([query], { actor, model, deadlineMs: QUERY_DEADLINE_MS });
  } catch (err) {
    onFallback({ botId: actor.botId, error: err instanceof Error ? err : new Error(String(err)) });
    return [];
  }
  const unit = unitVector(vector ?? []);
  if (!unit.some((value) => value !== 0)) return [];
  const found = await candidates({ signature: vectorSignature(unit), limit: candidatesFor(depth) });
  return nearest(unit, found, depth);
}

/**
 * How many candidates an index gives for `depth` hits: the exact top 10 of the query must be among
 * them. Measured on the bench's corpus (signatures of 512 bits, 384 dimensions): 300 candidates held
 * 0.98 of the exact top 10 at 20,000 passages, 500 held 0.99 (bench/lib/retrieval.ts measures it at
 * each size against the exact scan).
 */
function candidatesFor(depth: number): number {
  return Math.max(depth * CANDIDATES_PER_HIT, MIN_CANDIDATES);
}
const CANDIDATES_PER_HIT = 4;
const MIN_CANDIDATES = 500;

/** A search (of files, or of a table's rows) that answered by words alone: its query could not be embedded. */
export interface SearchFallback {
  botId: string;
  error: Error;
}

/** What such a search says in its answer's `warnings` (the server's log has the provider's error). */
export const RANKED_BY_WORDS_ALONE =
  'Ranked by words alone: the query could not be embedded (the embedding provider failed or did not answer in time)';

/**
 * A search's report of a fallback: the server's (which logs it) and the search's own (which says so in
 * its answer), both told.
 */
export function reportingTo(
  server: (fallback: SearchFallback) => void,
  search: SearchFallback[],
): (fallback: SearchFallback) => void {
  return (fallback) => {
    search.push(fallback);
    server(fallback);
  };
}

/** The `warnings` of a search's answer: none when it ranked as asked. */
export function warningsOf(fallbacks: readonly SearchFallback[]): { warnings?: string[] } {
  return fallbacks.length > 0 ? { warnings: [RANKED_BY_WORDS_ALONE] } : {};
}

/** Reciprocal rank fusion's constant: how much the first ranks weigh more than the next ones. */
export const RRF_K = 60;

/**
 * A search's ranking, as the server's PARLEY_SEARCH_RANKING says: by words alone (the query is then not
 * embedded), by meaning alone (by words when nothing ranks by meaning: no vectors yet, or the query could
 * not be embedded), or both fused (`hybrid`, the default). `byWords` is asked for `limit` hits, or for
 * `depth` when they are fused.
 */
export async function rankedBy(
  how: SearchRanking,
  byWords: (depth: number) => Promise<SearchHit[]>,
  byMeaning: () => Promise<SearchHit[]>,
  { limit, depth }: { limit: number; depth: number },
): Promise<SearchHit[]> {
  if (how === 'words') return (await byWords(limit)).slice(0, limit);
  if (how === 'meaning') {
    const meaning = await byMeaning();
    return (meaning.length > 0 ? meaning : await byWords(limit)).slice(0, limit);
  }
  // Both at once: the words are ranked while the query is embedded (a round trip to the provider) and
  // its vectors scanned, on another connection of the pool (or after it, on a transaction's one).
  const [words, meaning] = await Promise.all([byWords(Math.max(limit, depth)), byMeaning()]);
  return meaning.length === 0 ? words.slice(0, limit) : fused([words, meaning], limit);
}

/**
 * Reciprocal rank fusion: each item scores the sum, over the rankings that hold it, of 1 / (k + its
 * rank there). It needs no common scale between BM25's scores and cosine similarities.
 */
export function fused(rankings: SearchHit[][], limit: number): SearchHit[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((hit, rank) => scores.set(hit.id, (scores.get(hit.id) ?? 0) + 1 / (RRF_K + rank + 1)));
  }
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || compareIds(a.id, b.id))
    .slice(0, limit);
}

/**
 * The `depth` stored vectors closest to a unit query vector, by exact cosine similarity, best first.
 * Vectors of another length (another model's, or a row with nothing to embed) are not compared.
 */
export function nearest(query: Float32Array, rows: readonly VectorCandidate[], depth: number): SearchHit[] {
  const scored: SearchHit[] = [];
  for (const row of rows) {
    const candidate = fromBytes(row.vector);
    if (candidate.length === query.length) scored.push({ id: row.id, score: dot(query, candidate) });
  }
  return scored.sort((a, b) => b.score - a.score || compareIds(a.id, b.id)).slice(0, depth);
}

export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
