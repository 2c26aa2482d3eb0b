import { sql } from 'kysely';
import type { Store } from '../store/index.ts';
import type { EventsTable } from '../store/schema.ts';
import { nowIso } from './time.ts';

/**
 * The durable queue of events for bot runtimes: pending events, claimed with a lease by one engine
 * process at a time, one event per conversation at a time, in creation order. A claim that is not
 * renewed (its process died) lapses, and the event is claimed again: delivery is at least once.
 */
export class EventQueue {
  private readonly waiters = new Set<() => void>();

  constructor(private readonly store: Store) {}

  /** Called when this process queues an event, so its engine need not wait for its next poll. */
  notify(): void {
    for (const wake of this.waiters) wake();
  }

  onQueued(wake: () => void): () => void {
    this.waiters.add(wake);
    return () => this.waiters.delete(wake);
  }

  /**
   * Claims up to `limit` events a runtime can work on now: pending, of a bot whose code a runtime here
   * runs, not claimed (or claimed by a lapsed lease), and each the oldest pending event of its conversation.
   */
  async claim(owner: string, leaseMs: number, limit: number, exclude: string[] = []): Promise<EventsTable[]> {
    const now = nowIso();
    const candidates = await sql<{ id: string }>`
      select e.id from events e join bots b on b.id = e.bot_id
      where e.status = 'pending' and b.runtime is not null
        and (e.lease_until is null or e.lease_until < ${now})
        ${exclude.length ? sql`and e.conversation_id not in (${sql.join(exclude)})` : sql``}
        and not exists (
          select 1 from events p
          where p.conversation_id = e.conversation_id and p.status = 'pending'
            and (p.created_at < e.created_at or (p.created_at = e.created_at and p.id < e.id))
        )
      order by e.created_at, e.id
      limit ${limit}`.execute(this.store.db);
    const claimed: EventsTable[] = [];
    const until = new Date(Date.now() + leaseMs).toISOString();
    for (const { id } of candidates.rows) {
      // Conditional on the lease being free: of several processes, one wins each event.
      const row = await this.store.db
        .updateTable('events')
        .set({ lease_owner: owner, lease_until: until })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(row);
    }
    return claimed;
  }

  async renew(owner: string, eventIds: string[], leaseMs: number): Promise<void> {
    if (eventIds.length === 0) return;
    await this.store.db
      .updateTable('events')
      .set({ lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', eventIds)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Ends an event's processing: `processed`, `ignored` or `failed` (with the reason). */
  async finish(
    eventId: string,
    status: 'processed' | 'ignored' | 'failed',
    failureReason?: string,
  ): Promise<void> {
    await this.store.db
      .updateTable('events')
      .set({
        status,
        failure_reason: failureReason?.slice(0, 2000) ?? null,
        lease_owner: null,
        lease_until: null,
        updated_at: nowIso(),
      })
      .where('id', '=', eventId)
      .execute();
  }

  /** Lets go of every claim of a process that is starting again (one process per SQLite file). */
  async releaseAll(): Promise<void> {
    await this.store.db
      .updateTable('events')
      .set({ lease_owner: null, lease_until: null })
      .where('status', '=', 'pending')
      .where('lease_owner', 'is not', null)
      .execute();
  }
}
