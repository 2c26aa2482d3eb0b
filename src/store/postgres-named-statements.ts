/**
 * On Postgres, statements that run again and again run as named statements: each connection parses and
 * plans one the first time it runs it, and only binds values after that (an unnamed statement, what `pg`
 * sends otherwise, is parsed and planned on every run, by a database that serves every process).
 *
 * - The prepared queries (store/prepared.ts) are named from their first run: their texts are the hot
 *   path's.
 * - Any other statement is named once its text has run HOT_AFTER times, up to MAX_NAMED texts in all:
 *   a connection keeps every statement it prepared for as long as it lives, so the set is bounded, and
 *   the texts that run often (a turn's reads, the Chat API's lookups) are the first to reach it.
 * - Never named: transaction control and DDL (nothing to plan again), and the statements over the
 *   Tables API's row tables, whose columns change while servers run: a named `select *` of a table that
 *   gained a column fails (`cached plan must not change result type`).
 */
import type pg from 'pg';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

import { ROW_TABLE_PREFIX } from './schema.ts';

/** Runs of one text after which it is named. */
export const HOT_AFTER = 3;
/** Texts named because they ran often, at most (the prepared queries' are besides these). */
export const MAX_NAMED = 300;
/** Texts whose runs are counted, at most: past it the counts start over. */
const MAX_COUNTED = 5000;

/** The name of each text that runs as a named statement. */
const names = new Map<string, string>();
/** Runs of each text not named yet. */
const runs = new Map<string, number>();
let namedForRuns = 0;

/** Marks `sql` as the text of a prepared query: it runs as a named statement from now on. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `parley_${names.size + 1}`);
}

/** Statements whose plan is worth keeping: reads and writes of Parley's own tables. */
function nameable(sql: string): boolean {
  return /^\s*(select|insert|update|delete|with)\b/i.test(sql) && !sql.includes(ROW_TABLE_PREFIX);
}

/** The name `sql` runs under, if it runs as a named statement (counting this run). */
export function statementName(sql: string): string | undefined {
  const name = names.get(sql);
  if (name !== undefined || namedForRuns >= MAX_NAMED || !nameable(sql)) return name;
  const count = (runs.get(sql) ?? 0) + 1;
  if (count < HOT_AFTER) {
    if (runs.size >= MAX_COUNTED) runs.clear();
    runs.set(sql, count);
    return undefined;
  }
  runs.delete(sql);
  namedForRuns++;
  nameStatement(sql);
  return names.get(sql);
}

/** `pool`, whose connections run the named texts as named statements. */
export function namedStatementPool(pool: pg.Pool): PostgresPool {
  // One wrapper per connection, so that Kysely sees the same connection each time it is checked out.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = { query: namingQuery(client), release: () => client.release() };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/** `client.query` for Kysely, naming the statements of prepared queries. */
function namingQuery(client: pg.PoolClient): PostgresPoolClient['query'] {
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query(sql: string | object, parameters?: ReadonlyArray<unknown>): unknown {
    // Kysely uses the cursor form only when the dialect is given a cursor, and Parley's is not.
    if (typeof sql !== 'string') throw new Error('cursors are not used on this pool');
    const name = statementName(sql);
    const values = [...(parameters ?? [])];
    return client.query(name ? { name, text: sql, values } : { text: sql, values });
  }
  return query;
}
