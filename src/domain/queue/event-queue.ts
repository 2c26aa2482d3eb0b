import { sql } from 'kysely';
import type { Compilable, OperationNodeSource, RawBuilder } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import type { Row } from '../../store/schema.ts';
import { nowIso } from '../shared/time.ts';
import { toEvent } from '../runtime/events.ts';
import type { Event } from '../runtime/events.ts';

/** An event the engine claimed: the bot's event, whose bot it is, and how many tries it had. */
export interface ClaimedEvent extends Event {
  botId: string;
  attempts: number;
  /** This claim is the first: no earlier run of its turn (interrupted or failed) can have done anything. */
  firstDelivery: boolean;
}

/** The condition "an older event of `event`'s conversation is still pending" (one indexed probe). */
function olderPending(event: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`select 1 from events p
    where p.conversation_id = ${event}.conversation_id and p.status = 'pending'
      and (p.created_at < ${event}.created_at or (p.created_at = ${event}.created_at and p.id < ${event}.id))`;
}

/** Its bot has code a runtime runs: what every claim requires of an event (`events` is the claimed row). */
const RUNNABLE = sql`exists (select 1 from bots b where b.id = events.bot_id and b.runtime is not null)`;

/** The named events, each if nothing of its conversation is pending before it and its bot runs code. */
function claimable(eventIds: string[]): RawBuilder<unknown> {
  return sql`id in (${sql.join(eventIds)}) and not exists (${olderPending(sql.ref('events'))}) and ${RUNNABLE}`;
}

/** Claims the events `which` selects, each if its lease is free: what every claim of the queue runs. */
function claimWhere(owner: string, leaseUntil: string, now: string, which: RawBuilder<unknown>) {
  return sql<Row<'events'>>`
    update events set lease_owner = ${owner}, lease_until = ${leaseUntil}, deliveries = deliveries + 1
    where ${which} and status = 'pending' and (lease_until is null or lease_until < ${now})
    returning *`;
}

type ClaimArgs = { owner: string; leaseUntil: string; now: string; id: string };

/** The claims of one event by id on the hot path, prepared: as it is queued, and as its predecessor ends. */
const claimClaimable = prepare(['owner', 'leaseUntil', 'now', 'id'], (_db, a: ClaimArgs) =>
  claimWhere(a.owner, a.leaseUntil, a.now, claimable([a.id])),
);
const claimRunnable = prepare(['owner', 'leaseUntil', 'now', 'id'], (_db, a: ClaimArgs) =>
  claimWhere(a.owner, a.leaseUntil, a.now, sql`id = ${a.id} and ${RUNNABLE}`),
);

type EventEnd = {
  eventId: string;
  status: 'processed' | 'ignored' | 'failed';
  failureReason: string | null;
  now: string;
};

/** The update that ends an event's processing. */
function endEvent(db: Executor, a: EventEnd) {
  return db
    .updateTable('events')
    .set({
      status: a.status,
      failure_reason: a.failureReason,
      lease_owner: null,
      lease_until: null,
      updated_at: a.now,
    })
    .where('id', '=', a.eventId);
}

const finishEvent = prepare(['eventId', 'status', 'failureReason', 'now'], endEvent);

/** Claimed rows as the engine's events, in queue order. */
function toClaimed(rows: Row<'events'>[]): ClaimedEvent[] {
  return rows
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
    .map((row) => ({
      ...toEvent(row),
      botId: row.bot_id,
      attempts: row.attempts,
      firstDelivery: row.deliveries === 1,
    }));
}

/** An event queued by this process: its id, and the claim its engine took on it as it was stored. */
export interface QueuedNotice {
  id: string;
  claimed?: ClaimedEvent;
}

/** This process's engine, which takes events as they are queued here (see `claimAtInsert`). */
export interface LocalWorker {
  owner: string;
  leaseMs: number;
  /** Whether it takes more work now. */
  accepting(): boolean;
}

/** Tries of an event whose turn keeps failing for reasons that may pass, before it is marked failed. */
export const MAX_ATTEMPTS = 8;
/** The longest a failure reason is kept (the hosted API's bound). */
const FAILURE_REASON_MAX = 2000;

/** How long an event waits before attempt `attempts + 1`: a second, doubling, at most a minute. */
export function retryDelayMs(attempts: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempts - 1), 60_000);
}

/**
 * The durable queue of events for bot runtimes: pending events, claimed with a lease by one engine
 * process at a time, one event per conversation at a time, in creation order. A claim that is not
 * renewed (its process died) lapses, and the event is claimed again: delivery is at least once.
 */
export class EventQueue {
  private readonly waiters = new Set<(queued?: QueuedNotice[]) => void>();
  private worker: LocalWorker | undefined;

  constructor(private readonly store: Store) {}

  /** The queue is the engine's work: its statements take the turns' connections (Store.turnDb). */
  private get db() {
    return this.store.turnDb;
  }

  /**
   * Called when this process queues events (after their commit), so its engine need not wait for its
   * next poll; `queued` names them when the caller knows which, with the claims taken as they were stored.
   */
  notify(queued?: QueuedNotice[]): void {
    for (const wake of this.waiters) wake(queued);
  }

  onQueued(wake: (queued?: QueuedNotice[]) => void): () => void {
    this.waiters.add(wake);
    return () => this.waiters.delete(wake);
  }

  /** The engine of this process takes the events queued here as they are stored, while it accepts work. */
  serveLocally(worker: LocalWorker): () => void {
    this.worker = worker;
    return () => {
      if (this.worker === worker) this.worker = undefined;
    };
  }

  /**
   * Claims an event just inserted, in the transaction that inserts it, for this process's engine (if it
   * accepts work): no claim to make once it is committed. Only if it can be worked on now, as in
   * `claimQueued`; otherwise it is left to the claims after the commit.
   */
  async claimAtInsert(db: Executor, eventId: string): Promise<ClaimedEvent | undefined> {
    const worker = this.worker;
    if (!worker?.accepting()) return undefined;
    return this.takeOne(claimClaimable, worker.owner, worker.leaseMs, eventId, db);
  }

  /** Events waiting for a turn, and how long the oldest has waited (for the metrics). */
  async stats(now = Date.now()): Promise<{ depth: number; oldestAgeSeconds: number }> {
    // Read for a /metrics request, not for a turn: it takes a request's connection.
    const row = await this.store.db
      .selectFrom('events')
      .select((eb) => [eb.fn.countAll<number | string>().as('depth'), eb.fn.min('created_at').as('oldest')])
      // A literal, not a parameter: only then may the store use its index of pending events.
      .where('status', '=', sql.lit('pending'))
      .executeTakeFirst();
    const oldest = row?.oldest ? Date.parse(row.oldest) : now;
    return { depth: Number(row?.depth ?? 0), oldestAgeSeconds: Math.max(0, (now - oldest) / 1000) };
  }

  /**
   * Claims up to `limit` events a runtime can work on now: pending, of a bot whose code a runtime here
   * runs, not claimed (or claimed by a lapsed lease), and each the oldest pending event of its conversation.
   * This looks through the whole queue; `claimQueued` and `claimNext` are the cheap claims of the
   * events the engine knows of.
   */
  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: ClaimedEvent[]; more: boolean }> {
    const now = nowIso();
    // One more than it may take, to tell whether others wait. A read first: many looks find nothing,
    // and on SQLite an UPDATE takes the one write lock even when it changes nothing.
    const { rows } = await sql<{ id: string }>`
      select e.id from events e join bots b on b.id = e.bot_id
      where e.status = 'pending' and b.runtime is not null
        and (e.lease_until is null or e.lease_until < ${now})
        and not exists (${olderPending(sql.ref('e'))})
      order by e.created_at, e.id
      limit ${limit + 1}`.execute(this.db);
    const ids = rows.slice(0, limit).map((r) => r.id);
    const items = ids.length ? await this.take(owner, leaseMs, now, sql`id in (${sql.join(ids)})`) : [];
    return { items, more: rows.length > limit };
  }

  /**
   * Claims the named events (just queued by this process) that can be worked on now, in one statement
   * over their own rows: those of a conversation with an older event still pending wait for
   * `claimNext` after its turn.
   */
  async claimQueued(owner: string, leaseMs: number, eventIds: string[]): Promise<ClaimedEvent[]> {
    if (eventIds.length === 0) return [];
    const now = nowIso();
    return this.take(owner, leaseMs, now, claimable(eventIds));
  }

  /** After an event's turn: claims the next pending event of its conversation, if it can be worked on now. */
  async claimNext(owner: string, leaseMs: number, after: ClaimedEvent): Promise<ClaimedEvent[]> {
    if (after.conversationId === undefined) return [];
    const now = nowIso();
    // The oldest pending event of the conversation, through its partial index: nothing to claim unless
    // it is free (the turn that just ended left it, or it is the next one).
    const next = sql<{ id: string }>`select p.id from events p
      where p.conversation_id = ${after.conversationId} and p.status = 'pending'
      order by p.created_at, p.id limit 1`;
    if (this.store.dialect === 'postgres') {
      return this.take(owner, leaseMs, now, sql`id = (${next}) and ${RUNNABLE}`);
    }
    // On SQLite, as in `claim`: most turns leave nothing behind them, and a read takes no write lock.
    const id = (await next.execute(this.db)).rows[0]?.id;
    const claimed = id === undefined ? undefined : await this.takeOne(claimRunnable, owner, leaseMs, id);
    return claimed ? [claimed] : [];
  }

  /**
   * Takes the pending, unclaimed events `which` selects: each only if its lease is still free when it
   * is taken, so of several processes one wins each event (on Postgres a loser re-reads the row and
   * skips it).
   */
  private async take(
    owner: string,
    leaseMs: number,
    now: string,
    which: RawBuilder<unknown>,
    db: Executor = this.db,
  ): Promise<ClaimedEvent[]> {
    const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
    const { rows } = await claimWhere(owner, leaseUntil, now, which).execute(db);
    return toClaimed(rows);
  }

  /** `take` of one event by id, with one of the prepared claims (the hot path's). */
  private async takeOne(
    claim: typeof claimClaimable,
    owner: string,
    leaseMs: number,
    id: string,
    db: Executor = this.db,
  ): Promise<ClaimedEvent | undefined> {
    const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
    const { rows } = await claim.execute(db, { owner, leaseUntil, now: nowIso(), id });
    return toClaimed(rows)[0];
  }

  async renew(owner: string, eventIds: string[], leaseMs: number): Promise<void> {
    if (eventIds.length === 0) return;
    await this.db
      .updateTable('events')
      .set({ lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', eventIds)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /**
   * A turn failed for a reason that may pass: the event stays pending, waits (longer after each
   * attempt), then is claimed again; after MAX_ATTEMPTS it is marked failed with the reason.
   */
  async retryLater(event: ClaimedEvent, reason: string): Promise<'retrying' | 'failed'> {
    const attempts = event.attempts + 1;
    if (attempts >= MAX_ATTEMPTS) {
      await this.finish(event.id, 'failed', `gave up after ${attempts} attempts: ${reason}`);
      return 'failed';
    }
    await this.db
      .updateTable('events')
      .set({
        attempts,
        failure_reason: reason.slice(0, FAILURE_REASON_MAX),
        lease_owner: null,
        lease_until: new Date(Date.now() + retryDelayMs(attempts)).toISOString(),
        updated_at: nowIso(),
      })
      .where('id', '=', event.id)
      .where('status', '=', 'pending')
      .execute();
    return 'retrying';
  }

  /** Ends an event's processing: `processed`, `ignored` or `failed` (with the reason). */
  async finish(
    eventId: string,
    status: 'processed' | 'ignored' | 'failed',
    failureReason?: string,
  ): Promise<void> {
    await finishEvent.execute(this.db, {
      eventId,
      status,
      failureReason: failureReason?.slice(0, FAILURE_REASON_MAX) ?? null,
      now: nowIso(),
    });
  }

  /**
   * Ends an event's processing after another write (a turn's last states). On Postgres both are one
   * statement (the write as a data-modifying CTE): one round trip and one commit instead of two. On SQLite
   * they run one after the other, as two writes: its group commit (store/sqlite-group-commit.ts) already
   * shares commits, and a transaction for the two measured no faster under the held load.
   */
  async finishWith(
    eventId: string,
    status: 'processed' | 'ignored',
    write: ((db: Executor) => Compilable & OperationNodeSource) | undefined,
  ): Promise<void> {
    if (!write) return this.finish(eventId, status);
    const { db } = this;
    if (this.store.dialect === 'postgres') {
      const end: EventEnd = { eventId, status, failureReason: null, now: nowIso() };
      await sql`with written as (${write(db)}) ${endEvent(db, end)}`.execute(db);
      return;
    }
    await db.executeQuery(write(db));
    await this.finish(eventId, status);
  }

  /**
   * At start: on SQLite (one process per file) every claim was made by an earlier run of this very
   * process, so none holds any more. On Postgres other processes' claims are theirs: nothing to do.
   */
  async releaseStaleClaims(): Promise<void> {
    if (this.store.dialect !== 'sqlite') return;
    await this.db
      .updateTable('events')
      .set({ lease_owner: null, lease_until: null })
      .where('status', '=', sql.lit('pending'))
      .where('lease_owner', 'is not', null)
      .execute();
  }
}
