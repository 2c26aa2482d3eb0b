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
  // The query's use of the model is recorded while its candidates are read (both before the answer).
  const usageRecords: Promise<void>[] = [];
  try {
    [vector] = await embedder.embed([query], {
      actor,
      model,
      deadlineMs: QUERY_DEADLINE_MS,
      usageRecords,
    });
  } catch (err) {
    await Promise.all(usageRecords);
    onFallback({ botId: actor.botId, error: err instanceof Error ? err : new Error(String(err)) });
    return [];
  }
  const unit = unitVector(vector ?? []);
  const [found] = await Promise.all([
    unit.some((value) => value !== 0)
      ? candidates({ signature: vectorSignature(unit), limit: candidatesFor(depth) })
      : [],
    ...usageRecords,
  ]);
  return found.length === 0 ? [] : nearest(unit, found, depth);
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

/**
 * How much meaning weighs in a hybrid score, words the rest: a passage's words can lift it above one
 * closer in meaning by at most (1 - MEANING_WEIGHT) / MEANING_WEIGHT = 0.11 of cosine similarity (the
 * best match by words gets all of it, others in proportion to their BM25 score). So words order passages
 * of about the same meaning (an exact name, code or number), and never outrank one clearly closer: at 0.8
 * (0.25), passages that shared two of a paraphrase's three concepts and one of its words outranked its
 * answer once the bench's corpus had 20,000 passages. Reciprocal rank fusion, before, ranked by position
 * only: a passage sharing one word of a paraphrase, which meaning ranked second, outscored the one meaning
 * ranked first by far (bench/results/2026-11-28-fusion.md has the rules compared).
 */
export const MEANING_WEIGHT = 0.9;

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
  const wordsDepth = Math.max(limit, depth);
  const [words, meaning] = await Promise.all([byWords(wordsDepth), byMeaning()]);
  return meaning.length === 0
    ? words.slice(0, limit)
    : fused({ words, meaning }, { limit, wordsDepth, meaningDepth: depth });
}

/**
 * A convex combination of the two rankings' scores (Bruch, Gai and Ingber, "An Analysis of Fusion
 * Functions for Hybrid Retrieval", ACM TOIS 2023: it ranked better than reciprocal rank fusion in and out
 * of domain, and fusion by rank alone was sensitive to its constant): MEANING_WEIGHT times the cosine
 * similarity (on its own fixed scale; below 0 counts as 0), plus the rest times the BM25 score over the
 * best one of the answer (BM25 has no fixed top; its least, 0, is sharing no word). A hit one ranking does
 * not hold scores there the last score of that ranking when it was cut at its depth (it ranks below all
 * of them: it may rank just below, and 0 would put a gap there that nothing measured), 0 otherwise.
 * Scores are in [0, 1], higher is closer; a hit both rankings hold scores the same however deep they went.
 */
export function fused(
  { words, meaning }: { words: SearchHit[]; meaning: SearchHit[] },
  { limit, wordsDepth, meaningDepth }: { limit: number; wordsDepth: number; meaningDepth: number },
): SearchHit[] {
  const best = Math.max(0, ...words.map((hit) => hit.score));
  const byWords = scaled(words, wordsDepth, (score) => (best > 0 ? Math.max(0, score) / best : 0));
  const byMeaning = scaled(meaning, meaningDepth, (score) => Math.max(0, score));
  return [...new Set([...byWords.scores.keys(), ...byMeaning.scores.keys()])]
    .map((id) => ({
      id,
      score:
        MEANING_WEIGHT * (byMeaning.scores.get(id) ?? byMeaning.missing) +
        (1 - MEANING_WEIGHT) * (byWords.scores.get(id) ?? byWords.missing),
    }))
    .sort((a, b) => b.score - a.score || compareIds(a.id, b.id))
    .slice(0, limit);
}

/** A ranking's scores on the scale of `scale`, and what a hit it does not hold scores there. */
function scaled(
  ranking: SearchHit[],
  depth: number,
  scale: (score: number) => number,
): { scores: Map<string, number>; missing: number } {
  const scores = new Map(ranking.map((hit) => [hit.id, scale(hit.score)]));
  const last = ranking.at(-1);
  return { scores, missing: ranking.length >= depth && last ? scale(last.score) : 0 };
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
