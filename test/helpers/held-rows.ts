import pg from 'pg';
import { waitFor } from './runtime.ts';

/**
 * Runs `request` while `statement` (a write to rows the request rewrites) is made in a transaction of its
 * own on PostgreSQL and not yet committed; commits it once a statement of the server waits for it, as a
 * sweeper or another replica commits while a request is under way. Settles as the request does.
 */
export async function whileChangedOutside<T>(
  databaseUrl: string,
  statement: string,
  values: unknown[],
  request: () => Promise<T>,
): Promise<T> {
  const outside = new pg.Client({ connectionString: databaseUrl });
  await outside.connect();
  try {
    await outside.query('begin');
    await outside.query(statement, values);
    const outcome = request();
    outcome.catch(() => undefined); // settled by the caller, once the change is committed
    await waitFor('the request waiting for the rows changed outside', async () => {
      // A transaction sees one snapshot of the activity unless told to take a new one.
      await outside.query('select pg_stat_clear_snapshot()');
      const { rows } = await outside.query<{ waiting: number }>(
        'select count(*)::int as waiting from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))',
      );
      return rows[0]?.waiting === 1;
    });
    await outside.query('commit');
    return await outcome;
  } finally {
    await outside.end();
  }
}

/**
 * Runs `work` while `lock` (a `lock table` statement) is held by a transaction of its own on PostgreSQL,
 * until `work` calls `release` (or ends): the store's writes (or reads) of the table wait meanwhile.
 */
export async function lockedFromOutside(
  databaseUrl: string,
  lock: string,
  work: (release: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query(lock);
    await work(async () => {
      await locker.query('commit');
    });
  } finally {
    await locker.query('rollback').catch(() => undefined);
    await locker.end();
  }
}
