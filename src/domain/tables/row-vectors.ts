import { sql } from 'kysely';
import type { Executor, SearchHit, VectorIndex } from '../../store/index.ts';
import type { EmbeddingQueue, EmbeddingSource, EmbeddingText, StoredVector } from '../embeddings/queue.ts';
import { closestToQuery, reportingTo } from '../embeddings/ranking.ts';
import type { SearchFallback } from '../embeddings/ranking.ts';
import { contentHash } from '../embeddings/vectors.ts';
import type { BotActor } from '../workspace/actors.ts';
import { isSearchable } from './columns.ts';
import { rowView, tableRecord } from './record.ts';
import type { StoredRow, TableRecord, TableRow } from './record.ts';

/** Row ids in one statement. */
const ID_BATCH = 500;

/** The text of a row that search indexes and embeds: its searchable values, one a line. */
export function searchText(table: TableRecord, row: TableRow): string {
  return table.columns
    .filter(isSearchable)
    .map((c) => row[c.name])
    .filter((v) => v !== null && v !== undefined)
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
    .join('\n');
}

/**
 * The vectors of a table's rows (`row_vectors`): a row's searchable text embedded by the embedding
 * queue, off the request that wrote it. A write removes the vectors of the rows whose text it changed,
 * in its transaction, and queues the table; deleting rows removes theirs, deleting the table all of them.
 */
export class RowVectors {
  constructor(
    private readonly embedding: EmbeddingQueue,
    private readonly vectorIndex: VectorIndex,
    private readonly onFallback: (fallback: SearchFallback) => void,
  ) {
    embedding.register('table', rowSource);
  }

  /** Rows written: the vectors of a text that changed go, and the table waits to be embedded. */
  async written(trx: Executor, table: TableRecord, rows: TableRow[]): Promise<void> {
    const model = this.embedding.embedder.model;
    let waiting = false;
    for (let at = 0; at < rows.length; at += ID_BATCH) {
      const batch = rows.slice(at, at + ID_BATCH);
      const stored = await trx
        .selectFrom('row_vectors')
        .select(['row_id', 'model', 'content_hash'])
        .where('table_id', '=', table.id)
        .where(
          'row_id',
          'in',
          batch.map((r) => r.id),
        )
        .execute();
      const hashes = new Map(batch.map((r) => [r.id, contentHash(searchText(table, r))]));
      const changed = [
        ...new Set(stored.filter((v) => v.content_hash !== hashes.get(v.row_id)).map((v) => v.row_id)),
      ];
      if (changed.length > 0) await this.removed(trx, table, changed);
      const current = new Set(
        stored.filter((v) => v.model === model && !changed.includes(v.row_id)).map((v) => v.row_id),
      );
      if (batch.some((r) => !current.has(r.id))) waiting = true;
    }
    if (waiting && model !== undefined) {
      await this.embedding.queue(trx, 'table', table.id, table.botId);
      this.embedding.notify();
    }
  }

  async removed(trx: Executor, table: TableRecord, rowIds: number[]): Promise<void> {
    for (let at = 0; at < rowIds.length; at += ID_BATCH) {
      await trx
        .deleteFrom('row_vectors')
        .where('table_id', '=', table.id)
        .where('row_id', 'in', rowIds.slice(at, at + ID_BATCH))
        .execute();
    }
  }

  /** The table is deleted: its vectors (the foreign key would take them too) and its embedding work go. */
  async dropped(trx: Executor, table: TableRecord): Promise<void> {
    await trx.deleteFrom('row_vectors').where('table_id', '=', table.id).execute();
    await this.embedding.forget(trx, [table.id]);
  }

  /**
   * The table's rows closest to the query's meaning, best first (at most `depth`): the candidates the
   * store's vector index gives, by exact cosine similarity of their vectors of the model they are ranked
   * with; none without a model or vectors, or when the query cannot be embedded (the server's
   * `onFallback` is told, and `fallbacks`, the search's own record).
   */
  async byMeaning(
    db: Executor,
    actor: BotActor,
    table: TableRecord,
    query: string,
    depth: number,
    fallbacks: SearchFallback[],
  ): Promise<SearchHit[]> {
    // A query of no word has no meaning to rank by.
    if (!/[\p{L}\p{N}]/u.test(query)) return [];
    const model = await this.embedding.searchModel('table', [table.id], db);
    if (model === undefined) return [];
    return closestToQuery(
      this.embedding.embedder,
      { actor, query, model, depth },
      ({ signature, limit }) =>
        this.vectorIndex.candidates(db, { source: 'rows', tableId: table.id, model, signature, limit }),
      reportingTo(this.onFallback, fallbacks),
    );
  }
}

/** The rows of a table as the embedding queue sees them. */
const rowSource: EmbeddingSource = {
  async missing(db, tableId, model, limit): Promise<EmbeddingText[]> {
    const table = await tableOf(db, tableId);
    if (!table || !table.columns.some(isSearchable)) return [];
    const { rows } = await sql<StoredRow>`select * from ${sql.id(table.storage)} t
      where not exists (select 1 from row_vectors v
        where v.table_id = ${table.id} and v.row_id = t.id and v.model = ${model})
      order by t.id limit ${limit}`.execute(db);
    return rows.map((stored) => {
      const row = rowView(table.columns, stored);
      const text = searchText(table, row);
      return { key: String(row.id), text, hash: contentHash(text) };
    });
  },

  known: (db, botId, model, hashes): Promise<StoredVector[]> =>
    db
      .selectFrom('row_vectors')
      .innerJoin('tables', 'tables.id', 'row_vectors.table_id')
      .select(['content_hash', 'dimension', 'vector', 'signature'])
      .where('row_vectors.model', '=', model)
      .where('content_hash', 'in', hashes)
      .where('tables.bot_id', '=', botId)
      .execute(),

  async write(trx, tableId, model, vectors): Promise<void> {
    const table = await tableOf(trx, tableId);
    if (!table) return;
    // Only the rows whose text is still the one embedded (a write meanwhile changed it: embedded again).
    const ids = vectors.map((v) => Number(v.key));
    const { rows } = await sql<StoredRow>`select * from ${sql.id(table.storage)}
      where id in (${sql.join(ids)})`.execute(trx);
    const hashes = new Map(
      rows.map((stored) => {
        const row = rowView(table.columns, stored);
        return [row.id, contentHash(searchText(table, row))];
      }),
    );
    const fresh = vectors
      .filter((v) => hashes.get(Number(v.key)) === v.content_hash)
      .map(({ key, ...v }) => ({ ...v, table_id: tableId, row_id: Number(key), model }));
    for (let at = 0; at < fresh.length; at += 200) {
      await trx
        .insertInto('row_vectors')
        .values(fresh.slice(at, at + 200))
        .onConflict((oc) => oc.columns(['table_id', 'row_id', 'model']).doNothing())
        .execute();
    }
  },

  async stale(db, model) {
    const tables = await db.selectFrom('tables').selectAll().execute();
    const stale: { id: string; botId: string }[] = [];
    for (const table of tables.map(tableRecord)) {
      if (!table.columns.some(isSearchable)) continue;
      const { rows } = await sql<{ one: number }>`select 1 as one where exists (
          select 1 from row_vectors v where v.table_id = ${table.id} and v.model <> ${model})
        or exists (select 1 from ${sql.id(table.storage)} t where not exists (
          select 1 from row_vectors v where v.table_id = ${table.id} and v.row_id = t.id and v.model = ${model}))`.execute(
        db,
      );
      if (rows.length > 0) stale.push({ id: table.id, botId: table.botId });
    }
    return stale;
  },

  anyVector: (db, tableIds, model) =>
    db
      .selectFrom('row_vectors')
      .select('row_id')
      .where('table_id', 'in', tableIds)
      .where('model', '=', model)
      // A row with nothing to embed has a vector of no dimension.
      .where('dimension', '>', 0)
      .limit(1),

  async otherModel(db, tableIds, model) {
    const row = await db
      .selectFrom('row_vectors')
      .select(['model', (eb) => eb.fn.countAll<number>().as('n')])
      .where('table_id', 'in', tableIds)
      .where('model', '<>', model)
      .groupBy('model')
      .orderBy('n', 'desc')
      .orderBy('model')
      .executeTakeFirst();
    return row?.model;
  },

  async dropOthers(db, botId, model): Promise<void> {
    await db
      .deleteFrom('row_vectors')
      .where('model', '<>', model)
      .where('table_id', 'in', (eb) => eb.selectFrom('tables').select('id').where('bot_id', '=', botId))
      .execute();
  },
};

async function tableOf(db: Executor, id: string): Promise<TableRecord | undefined> {
  const row = await db.selectFrom('tables').selectAll().where('id', '=', id).executeTakeFirst();
  return row && tableRecord(row);
}
