import type { Store } from '../../store/index.ts';
import { nowIso } from './time.ts';

/** Tables of durable work (sends, embeddings): rows due at `next_attempt_at` while `pending`, claimed with a lease. */
type LeasedTable = 'webhook_sends' | 'channel_sends' | 'embedding_jobs';

/**
 * The claims on the rows of a queue of sends: due rows are claimed with a lease, so that a row a
 * process died working on is taken by another once its lease lapses.
 */
export class LeasedRows {
  constructor(
    private readonly store: Store,
    private readonly table: LeasedTable,
  ) {}

  /** Up to `limit` due rows, claimed for `owner` until `leaseMs` from now; `more`: others are due. */
  async claim(owner: string, leaseMs: number, limit: number): Promise<{ ids: string[]; more: boolean }> {
    const { db } = this.store;
    const now = nowIso();
    const candidates = await db
      .selectFrom(this.table)
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit + 1)
      .execute();
    const until = new Date(Date.now() + leaseMs).toISOString();
    const ids: string[] = [];
    for (const { id } of candidates.slice(0, limit)) {
      // Conditional on the claim being free: of several processes, one wins each row.
      const claimed = await db
        .updateTable(this.table)
        .set({ lease_owner: owner, lease_until: until })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .executeTakeFirst();
      if (claimed.numUpdatedRows > 0n) ids.push(id);
    }
    return { ids, more: candidates.length > limit };
  }

  async renew(owner: string, ids: string[], leaseMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.store.db
      .updateTable(this.table)
      .set({ lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', ids)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** At start, when this process alone uses the database: every claim was this process's earlier run's. */
  async releaseStaleClaims(): Promise<void> {
    if (!this.store.sql.oneProcess) return;
    await this.store.db
      .updateTable(this.table)
      .set({ lease_owner: null, lease_until: null })
      .where('status', '=', 'pending')
      .where('lease_owner', 'is not', null)
      .execute();
  }

  /** Removes the rows that ended (delivered or given up) before `before`. */
  async pruneEnded(before: Date): Promise<void> {
    await this.store.db
      .deleteFrom(this.table)
      .where('status', '!=', 'pending')
      .where('updated_at', '<', before.toISOString())
      .execute();
  }
}
