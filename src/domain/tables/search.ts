import { sql } from 'kysely';
import type { Executor, SearchEngine, SearchHit } from '../../store/index.ts';
import type { SearchRanking } from '../../value-sets.ts';
import type { BotActor } from '../workspace/actors.ts';
import { rankedBy, warningsOf } from '../embeddings/ranking.ts';
import type { SearchFallback } from '../embeddings/ranking.ts';
import { isSearchable } from './columns.ts';
import { rowView } from './record.ts';
import type { StoredRow, TableRecord, TableRow } from './record.ts';
import { searchText } from './row-vectors.ts';
import type { RowVectors } from './row-vectors.ts';

/** Most hits a search ranks before the filter applies: the rows a search can answer come from these. */
export const SEARCH_HITS = 1000;
/** Rows indexed per statement when a whole table is indexed again. */
const REINDEX_BATCH = 1000;

/** The search entry of a row: the table's prefix, then the row id. */
const prefixOf = (table: Pick<TableRecord, 'id'>) => `tr:${table.id}:`;
const entryId = (table: Pick<TableRecord, 'id'>, rowId: number) => `${prefixOf(table)}${rowId}`;

/**
 * Search over a table's `searchable` columns: by their words, with the store's full-text engine (the
 * Files API's too: SQLite FTS5 or Postgres tsvector), each row's searchable values one entry written in
 * the transaction of the row's write; and, with an embedding model, by their meaning (RowVectors: the
 * vectors a write makes stale go in its transaction, new ones are made off it), the two rankings fused.
 */
export class TableSearch {
  constructor(
    private readonly engine: SearchEngine,
    private readonly vectors: RowVectors,
    private readonly ranking: SearchRanking,
  ) {}

  static searchable(table: TableRecord): boolean {
    return table.columns.some(isSearchable);
  }

  /** Indexes rows as written (their entries replace earlier ones). */
  async put(db: Executor, table: TableRecord, rows: TableRow[]): Promise<void> {
    const columns = table.columns.filter(isSearchable);
    if (columns.length === 0 || rows.length === 0) return;
    await this.engine.put(
      db,
      rows.map((row) => ({ id: entryId(table, row.id), scope: table.id, text: searchText(table, row) })),
    );
    await this.vectors.written(db, table, rows);
  }

  async remove(db: Executor, table: TableRecord, rowIds: number[]): Promise<void> {
    if (rowIds.length === 0) return;
    await this.engine.remove(
      db,
      rowIds.map((id) => entryId(table, id)),
    );
    await this.vectors.removed(db, table, rowIds);
  }

  /** The table is deleted: its entries, vectors and embedding work go, in its transaction. */
  async drop(db: Executor, table: TableRecord): Promise<void> {
    if (TableSearch.searchable(table)) await this.rebuild(db, { ...table, columns: [] }, table);
    await this.vectors.dropped(db, table);
  }

  /** Every row of the table indexed again (its searchable columns changed), or its entries dropped. */
  async rebuild(db: Executor, table: TableRecord, previous: TableRecord = table): Promise<void> {
    let after = 0;
    for (;;) {
      const { rows } = await sql<StoredRow>`
        select * from ${sql.id(table.storage)} where id > ${after} order by id limit ${REINDEX_BATCH}`.execute(
        db,
      );
      if (rows.length === 0) return;
      const views = rows.map((row) => rowView(table.columns, row));
      await this.remove(
        db,
        previous,
        views.map((r) => r.id),
      );
      await this.put(db, table, views);
      after = Number(rows[rows.length - 1]?.id);
    }
  }

  /**
   * The table's rows a search finds, best first: row id → score. By their words; with an embedding model
   * and the rows' vectors, by their meaning too (their scores combined, as files are searched: ranking.ts's `fused`), so that
   * rows that share no word with the query may come back, ranked below the better matches.
   */
  async search(
    db: Executor,
    actor: BotActor,
    table: TableRecord,
    query: string,
  ): Promise<{ scores: Map<number, number>; warnings?: string[] }> {
    const prefix = prefixOf(table);
    const byWords = async (limit: number): Promise<SearchHit[]> =>
      (
        await this.engine.search(db, {
          query,
          scopes: [table.id],
          limit,
        })
      ).map((hit) => ({ id: hit.id.slice(prefix.length), score: hit.score }));
    const fallbacks: SearchFallback[] = [];
    const ranked = await rankedBy(
      this.ranking,
      byWords,
      () => this.vectors.byMeaning(db, actor, table, query, SEARCH_HITS, fallbacks),
      { limit: SEARCH_HITS, depth: SEARCH_HITS },
    );
    return { scores: new Map(ranked.map((hit) => [Number(hit.id), hit.score])), ...warningsOf(fallbacks) };
  }
}
