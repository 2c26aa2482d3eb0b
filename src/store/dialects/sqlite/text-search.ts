import { sql } from 'kysely';
import type { Executor } from '../../executor.ts';
import type { SearchEngine, SearchEntry, SearchHit, SearchRequest } from '../text-search.ts';
import { queryTerms } from '../query-terms.ts';
import { oneOf } from './one-of.ts';

/**
 * SQLite FTS5 (porter stemmer over unicode61), ranked by BM25. The FTS table is contentless (the texts
 * live with the records they index); `search_entries` maps each entry's id to its FTS rowid.
 */
export class SqliteTextSearch implements SearchEngine {
  async put(db: Executor, entries: SearchEntry[]): Promise<void> {
    await this.remove(
      db,
      entries.map((e) => e.id),
    );
    for (const entry of entries) {
      const row = await db
        .insertInto('search_entries')
        .values({ id: entry.id, scope: entry.scope })
        .returning('rowid')
        .executeTakeFirstOrThrow();
      await sql`insert into search_fts (rowid, text) values (${row.rowid}, ${entry.text})`.execute(db);
    }
  }

  async remove(db: Executor, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      await sql`delete from search_fts where rowid in (select rowid from search_entries where id in (${sql.join(batch)}))`.execute(
        db,
      );
      await db.deleteFrom('search_entries').where('id', 'in', batch).execute();
    }
  }

  async search(db: Executor, request: SearchRequest): Promise<SearchHit[]> {
    const terms = queryTerms(request.query);
    if (terms.length === 0 || request.scopes.length === 0) return [];
    // Each term quoted: a string of letters and digits, never FTS5 syntax. Any term may match (OR);
    // BM25 ranks the entries that match more, and rarer, terms first.
    const match = terms.map((t) => `"${t}"`).join(' OR ');
    const also = request.candidate ? sql`and ${request.candidate(sql.ref('e.id'))}` : sql``;
    const { rows } = await sql<{ id: string; rank: number }>`
      select e.id as id, bm25(search_fts) as rank
      from search_fts join search_entries e on e.rowid = search_fts.rowid
      where search_fts match ${match} and ${oneOf(sql.ref('e.scope'), request.scopes)} ${also}
      order by rank, e.id limit ${request.limit}`.execute(db);
    // BM25 here is lower-is-better (negative): the API's scores are higher-is-better.
    return rows.map((r) => ({ id: r.id, score: -r.rank }));
  }
}
