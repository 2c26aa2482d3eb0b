/**
 * On Postgres, the prepared queries' statements (store/prepared.ts) run as named statements: each
 * connection parses and plans one the first time it runs it, and only binds values after that (an unnamed
 * statement, what `pg` sends otherwise, is parsed and planned on every run). Other statements are sent
 * as they are: their texts are not a bounded set, and a connection keeps every named statement it
 * prepared for as long as it lives.
 */
import type pg from 'pg';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/** The name of each prepared query's text, once it has been compiled for Postgres. */
const names = new Map<string, string>();

/** Marks `sql` as the text of a prepared query: it runs as a named statement from now on. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `parley_${names.size + 1}`);
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
    const name = names.get(sql);
    const values = [...(parameters ?? [])];
    return client.query(name ? { name, text: sql, values } : { text: sql, values });
  }
  return query;
}
