import type { Transaction } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { Database } from '../../store/schema.ts';

/**
 * Runs `work` in a transaction that holds a lock on `key`, so check-then-create sequences
 * (get-or-create) create one record however many callers race, across processes too
 * (`StoreSql.lockKey`). Given `trx`, the lock is taken in that transaction (and held until it ends);
 * otherwise in a new one.
 */
export async function withKeyLock<T>(
  store: Store,
  key: string,
  trx: Transaction<Database> | undefined,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const locked = async (t: Transaction<Database>) => {
    await store.sql.lockKey(t, key);
    return work(t);
  };
  return trx ? locked(trx) : store.db.transaction().execute(locked);
}
