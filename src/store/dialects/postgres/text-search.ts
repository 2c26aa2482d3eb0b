import { sql } from 'kysely';
import type { Executor } from '../../executor.ts';
import type { SearchEngine, SearchEntry, SearchHit, SearchRequest } from '../text-search.ts';
import { queryTerms } from '../query-terms.ts';
import { oneOf } from './one-of.ts';

/** Postgres full-text search: `english` tsvectors (stemmed, stop words dropped) in a GIN index, ranked by ts_rank_cd. */
export class PostgresTextSearch implements SearchEngine {
  async put(db: Executor, entries: SearchEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += 200) {
      const batch = entries.slice(i, i + 200);
      const values = batch.map((e) => sql`(${e.id}, ${e.scope}, to_tsvector('english', ${e.text}))`);
      await sql`insert into search_entries (id, scope, document) values ${sql.join(values)}
        on conflict (id) do update set scope = excluded.scope, document = excluded.document`.execute(db);
    }
  }

  async remove(db: Executor, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      await db
        .deleteFrom('search_entries')
        .where('id', 'in', ids.slice(i, i + 500))
        .execute();
    }
  }

  async search(db: Executor, request: SearchRequest): Promise<SearchHit[]> {
    const terms = queryTerms(request.query);
    if (terms.length === 0 || request.scopes.length === 0) return [];
    // Terms are letters and digits only, so they cannot be tsquery syntax; any may match (OR).
    const query = terms.join(' | ');
    const also = request.candidate ? sql`and ${request.candidate(sql.ref('e.id'))}` : sql``;
    // No length normalization: passages are chunked to a bounded length, and one that holds more of
    // the query's terms must outrank a heading that holds one.
    // The GIN index first (a materialized CTE, whatever the planner's estimates): the entries that match
    // any term, of the scopes searched (a comparison on the row the index found), ranked.
    const { rows } = await sql<{ id: string; score: number }>`
      with query as (select to_tsquery('english', ${query}) as q),
      matched as materialized (
        select e.id, e.document, query.q from search_entries e, query
        where e.document @@ query.q and ${oneOf(sql.ref('e.scope'), request.scopes)} ${also}
      )
      select m.id as id, ts_rank_cd(m.document, m.q) as score from matched m
      order by score desc, m.id limit ${request.limit}`.execute(db);
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  }
}
