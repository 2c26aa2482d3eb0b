import { sql } from 'kysely';
import type { Executor, SearchEngine, SearchHit } from '../../store/index.ts';
import { isSearchable } from './columns.ts';
import { rowView } from './record.ts';
import type { StoredRow, TableRecord, TableRow } from './record.ts';

/** Most hits a search ranks before the filter applies: the rows a search can answer come from these. */
export const SEARCH_HITS = 1000;
/** Rows indexed per statement when a whole table is indexed again. */
const REINDEX_BATCH = 1000;

/** The search entry of a row: the table's prefix, then the row id. */
const prefixOf = (table: Pick<TableRecord, 'id'>) => `tr:${table.id}:`;
const entryId = (table: Pick<TableRecord, 'id'>, rowId: number) => `${prefixOf(table)}${rowId}`;

/**
 * Full-text search over a table's `searchable` columns, with the store's engine (the Files API's too:
 * SQLite FTS5 or Postgres tsvector): each row's searchable values are one entry, written in the
 * transaction of the row's write.
 */
export class TableSearch {
  constructor(private readonly engine: SearchEngine) {}

  static searchable(table: TableRecord): boolean {
    return table.columns.some(isSearchable);
  }

  /** Indexes rows as written (their entries replace earlier ones). */
  async put(db: Executor, table: TableRecord, rows: TableRow[]): Promise<void> {
    const columns = table.columns.filter(isSearchable);
    if (columns.length === 0 || rows.length === 0) return;
    await this.engine.put(
      db,
      rows.map((row) => ({
        id: entryId(table, row.id),
        text: columns
          .map((c) => row[c.name])
          .filter((v) => v !== null && v !== undefined)
          .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
          .join('\n'),
      })),
    );
  }

  async remove(db: Executor, table: TableRecord, rowIds: number[]): Promise<void> {
    if (rowIds.length === 0) return;
    await this.engine.remove(
      db,
      rowIds.map((id) => entryId(table, id)),
    );
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

  /** The table's rows that match `query`, best first: row id → score. */
  async search(db: Executor, table: TableRecord, query: string): Promise<Map<number, number>> {
    const prefix = prefixOf(table);
    const hits: SearchHit[] = await this.engine.search(db, {
      query,
      candidate: (id) => sql`substr(${id}, 1, ${prefix.length}) = ${prefix}`,
      limit: SEARCH_HITS,
    });
    return new Map(hits.map((hit) => [Number(hit.id.slice(prefix.length)), hit.score]));
  }
}
