import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { Database } from '../../store/schema.ts';

/**
 * Runs `work` in a transaction that holds a lock on `key`, so check-then-create sequences
 * (get-or-create) create one record however many callers race. On SQLite every transaction
 * already runs alone (one connection); on Postgres a transaction-scoped advisory lock serialises
 * the callers of the same key across processes. Given `trx`, the lock is taken in that transaction
 * (and held until it ends); otherwise in a new one.
 */
export async function withKeyLock<T>(
  store: Store,
  key: string,
  trx: Transaction<Database> | undefined,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const locked = async (t: Transaction<Database>) => {
    if (store.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(t);
    }
    return work(t);
  };
  return trx ? locked(trx) : store.db.transaction().execute(locked);
}
