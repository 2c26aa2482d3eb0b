import type { RawBuilder, SqlBool } from 'kysely';
import type { Executor } from '../executor.ts';

/**
 * A text indexed for search, under an id of the caller's (a passage id, a table row's...), in a scope
 * (the passage's file, the row's table): what a search checks first for each entry that matches.
 */
export interface SearchEntry {
  id: string;
  scope: string;
  text: string;
}

export interface SearchHit {
  id: string;
  /** Higher is better; comparable between the hits of one search only. */
  score: number;
}

export interface SearchRequest {
  /** What the user typed: any text. */
  query: string;
  /** The scopes whose entries may be answered (the files a bot sees, a table): none, no answer. */
  scopes: string[];
  /**
   * Whether an entry of those scopes, whose id is in `id`, may be answered besides (it is no heading,
   * say): checked for each entry that matches, so it should be an indexed lookup by that id.
   */
  candidate?(id: RawBuilder<unknown>): RawBuilder<SqlBool>;
  limit: number;
}

/**
 * Ranks indexed texts against a query. Each store's full-text engine implements it (`StoreSql.textSearch`:
 * SQLite FTS5 with BM25, Postgres tsvector with ts_rank_cd, both with English stemming); a vector index
 * (embeddings) would be another implementation of the same three operations, and a hybrid one would
 * combine their hits. Entries are written in the caller's transaction, with the records they index.
 */
export interface SearchEngine {
  put(db: Executor, entries: SearchEntry[]): Promise<void>;
  remove(db: Executor, ids: string[]): Promise<void>;
  search(db: Executor, request: SearchRequest): Promise<SearchHit[]>;
}
