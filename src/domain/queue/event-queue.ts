import { sql } from 'kysely';
import type { Compilable, OperationNodeSource, RawBuilder } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import type { Row } from '../../store/schema.ts';
import { nowIso } from '../shared/time.ts';
import { toEvent, UNCLAIMED_EVENT_COLUMNS } from '../runtime/event-record.ts';
import type { Event } from '../runtime/schemas.ts';
import type { NewEventRow, UnclaimedEventRow } from '../runtime/event-record.ts';

/** An event the engine claimed: the bot's event, whose bot it is, and how many tries it had. */
export interface ClaimedEvent extends Event {
  botId: string;
  /** Its bot's workspace: whose share of the engine its turn takes. */
  workspaceId: string;
  /** Its turns that failed for a reason that may pass (each recorded, and tried again after a while). */
  attempts: number;
  /** How many times it was claimed, this claim included. */
  deliveries: number;
  /** This claim is the first: no earlier run of its turn (interrupted or failed) can have done anything. */
  firstDelivery: boolean;
}

/** The condition "an older event of `event`'s conversation is still pending" (one indexed probe). */
function olderPending(event: RawBuilder<unknown>, also: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`select 1 from events p
    where p.conversation_id = ${event}.conversation_id and p.status = 'pending'
      and (p.created_at < ${event}.created_at or (p.created_at = ${event}.created_at and p.id < ${event}.id))${also}`;
}

/**
 * The condition "`event` waits in its conversation": an older event of it is still pending, or a turn of
 * it runs (another of its events holds a live lease: a scheduled event that fired is older than the
 * events queued while it waited). Events of a conversation are queued in order (`Events.stamp`), so
 * these two are all a claim must see to keep its turns one after another. The events `ended` names,
 * pending in the statement's snapshot, were found ended since (`runningTurnsIn`).
 */
function waitsInConversation(
  event: RawBuilder<unknown>,
  now: string,
  ended?: RawBuilder<{ id: string }>,
): RawBuilder<unknown> {
  const notEnded = ended ? sql` and p.id not in (${ended})` : sql``;
  return sql`(exists (${olderPending(event, notEnded)}) or exists (select 1 from events p
    where p.conversation_id = ${event}.conversation_id and p.status = 'pending' and p.id <> ${event}.id
      and p.lease_until >= ${now}${notEnded}))`;
}

/** Its bot has code a runtime runs: what every claim requires of an event (`event` names its row). */
function runnable(event: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`exists (select 1 from bots b where b.id = ${event}.bot_id and b.runtime is not null)`;
}
const RUNNABLE = runnable(sql.ref('events'));

/**
 * The oldest pending event of `conversation`, through its partial index, other than `ending` (an event
 * the same statement ends, still pending in its snapshot): the next one its turns take.
 */
function oldestPendingIn(conversation: RawBuilder<unknown>, ending?: string) {
  const other = ending === undefined ? sql`` : sql` and p.id <> ${ending}`;
  return sql<{ id: string }>`select p.id from events p
    where p.conversation_id = ${conversation} and p.status = 'pending'${other}
    order by p.created_at, p.id limit 1`;
}

/**
 * A claim's condition for the event after a turn: `oldestPendingIn`, if its bot runs code; nothing to
 * claim unless it is free (the turn that just ended left it, or it is the next one).
 */
function successorIn(conversation: RawBuilder<unknown>, ending?: string): RawBuilder<unknown> {
  return sql`id = (${oldestPendingIn(conversation, ending)}) and ${RUNNABLE}`;
}

/**
 * A statement's hold on a conversation's row (`for update`; `also` adds to its condition), answering the
 * row's version (`xmin`) as held: where a concurrent write committed meanwhile, that write's version, not
 * the one the statement's snapshot saw (`versionSeen`). Every event queued in a conversation changes the
 * row as it is stored (`Events.stamp`, a message's count, a fired event's signal), so the two differ when
 * the snapshot may lack such an event.
 */
export function holdConversation(
  conversation: RawBuilder<unknown>,
  also: RawBuilder<unknown> = sql``,
): RawBuilder<{ version: string }> {
  return sql`select xmin::text as version from conversations where id = ${conversation}${also} for update`;
}

/**
 * The turns running in `conversation`, for a statement that stores an event there and then takes the
 * conversation's row (`holdConversation`). `ctes`, for its WITH clause: `running`, those its snapshot
 * sees (pending events under a live lease), and `turns`, those of them still pending once locked (`for
 * share`: a turn whose end was committing is waited for, and left out); `held` selects the latter,
 * `ended` the former's others, the turns that ended while the statement waited for their ends' commits.
 * A turn held cannot end before the statement commits (its end updates its event), so its end's claim of
 * a successor (`finishClaimingNext`'s, `claimNext`'s) sees the stored event, or sees the conversation's
 * row changed and looks again. A turn's end takes its event before the row too, so the two never wait
 * for each other. Retrying events (no owner) are not locked: a turn's end may claim one after it has
 * taken the row.
 */
export function runningTurnsIn(
  conversation: RawBuilder<unknown>,
  now: string,
): { ctes: RawBuilder<unknown>; held: RawBuilder<{ id: string }>; ended: RawBuilder<{ id: string }> } {
  return {
    ctes: sql`running as (select p.id from events p
        where p.conversation_id = ${conversation} and p.status = 'pending' and p.lease_owner is not null
          and p.lease_until >= ${now}),
      turns as (select p.id from events p
        where p.id in (select id from running) and p.status = 'pending'
        for share)`,
    held: sql`select id from turns`,
    ended: sql`select id from running except select id from turns`,
  };
}

/** The version of a conversation's row in the statement's snapshot (see `holdConversation`). */
function versionSeen(conversation: RawBuilder<unknown>): RawBuilder<string> {
  return sql`(select xmin::text from conversations where id = ${conversation})`;
}

/**
 * On a database server, the condition under which a statement that stores a pending event (`event` names
 * its values: id, conversation_id, created_at, bot_id) claims it as it stores it: `claimable`'s, seen in
 * the statement's snapshot, and its conversation's row as that snapshot saw it (`heldVersion`, from
 * `holdConversation`): an event committed while the statement waited for the row, which its snapshot
 * lacks, makes the versions differ; then nothing is claimed, and the claim after the commit
 * (`claimAtInsert`) decides. Turns the statement found ended since its snapshot (`ended`, from
 * `runningTurnsIn`) do not hold it back.
 */
export function claimsAsStored(
  event: RawBuilder<unknown>,
  heldVersion: RawBuilder<unknown>,
  now: string,
  ended?: RawBuilder<{ id: string }>,
): RawBuilder<unknown> {
  return sql`${heldVersion} = ${versionSeen(sql`${event}.conversation_id`)}
    and not ${waitsInConversation(event, now, ended)} and ${runnable(event)}`;
}

/** When a lease taken now for `leaseMs` ends. */
const leaseEnd = (leaseMs: number) => new Date(Date.now() + leaseMs).toISOString();

/** The named event, if it does not wait in its conversation and its bot runs code. */
function claimable(eventId: string, now: string): RawBuilder<unknown> {
  return sql`id = ${eventId} and not ${waitsInConversation(sql.ref('events'), now)} and ${RUNNABLE}`;
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
  claimWhere(a.owner, a.leaseUntil, a.now, claimable(a.id, a.now)),
);
const claimRunnable = prepare(['owner', 'leaseUntil', 'now', 'id'], (_db, a: ClaimArgs) =>
  claimWhere(a.owner, a.leaseUntil, a.now, sql`id = ${a.id} and ${RUNNABLE}`),
);

/**
 * A workspace's oldest claimable events, at most `take`: through its pending events in queue order (the
 * partial index by workspace), skipping those claimed and those behind another of their conversation.
 */
function oldestOf(workspaceId: RawBuilder<unknown>, take: RawBuilder<unknown>, now: string) {
  return sql<{ id: string; created_at: string }>`select e.id, e.created_at from events e
    where e.workspace_id = ${workspaceId} and e.status = 'pending'
      and (e.lease_until is null or e.lease_until < ${now})
      and not ${waitsInConversation(sql.ref('e'), now)}
      and ${runnable(sql.ref('e'))}
    order by e.created_at, e.id
    limit ${take}`;
}

type ClaimingArgs = UnclaimedEventRow & Omit<ClaimArgs, 'id'>;

/**
 * A pending event's insert that claims it as it stores it, when `claimClaimable` would claim it just
 * after (nothing of its conversation waits before it, its bot runs code): one statement where two ran.
 * Only in a database in this process: one writer, each statement seeing every write before it. On a
 * database server a statement sees the snapshot it began with, which may lack an event of the
 * conversation committed while it waited for the conversation's row.
 */
const insertClaiming = prepare(
  [...UNCLAIMED_EVENT_COLUMNS, 'owner', 'leaseUntil', 'now'],
  (_db, a: ClaimingArgs) => {
    const values = sql.join(UNCLAIMED_EVENT_COLUMNS.map((column) => sql`${a[column]}`));
    const claims = (value: unknown) => sql`case when n.claims then ${value} end`;
    return sql<Row<'events'>>`insert into events
        (${sql.join(UNCLAIMED_EVENT_COLUMNS.map((c) => sql.id(c)))}, workspace_id, lease_owner, lease_until, deliveries)
      select ${values}, (select workspace_id from bots where id = ${a.bot_id}),
        ${claims(a.owner)}, ${claims(a.leaseUntil)}, case when n.claims then 1 else 0 end
      from (select not ${waitsInConversation(sql.ref('e'), a.now)}
          and ${runnable(sql.ref('e'))} as claims
        from (select ${a.id} as id, ${a.conversation_id} as conversation_id, ${a.created_at} as created_at,
          ${a.bot_id} as bot_id) e) n
      returning *`;
  },
);

type OldestArgs = { workspaceId: string; take: number; now: string };
const oldestOfWorkspace = prepare(['workspaceId', 'take', 'now'], (_db, a: OldestArgs) =>
  oldestOf(sql`${a.workspaceId}`, sql`${a.take}`, a.now),
);

type EventEnd = {
  eventId: string;
  status: 'processed' | 'ignored' | 'failed';
  failureReason: string | null;
  now: string;
};

/**
 * The update that ends an event's processing. The trigger of SQLite's view `state_writes` (migration 0039)
 * ends one the same way: keep both alike.
 */
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

/**
 * What a turn's end that claims its successor answers: the successor's row if it claimed one, and the
 * conversation's row version as its snapshot saw it and as it held it (`EventQueue.finishClaimingNext`).
 */
type SuccessorRow = (Row<'events'> | { [K in keyof Row<'events'>]: null }) & {
  held_version: string | null;
  seen_version: string | null;
};

/** Claimed rows as the engine's events, in queue order. */
function toClaimed(rows: Row<'events'>[]): ClaimedEvent[] {
  return rows
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
    .map((row) => ({
      ...toEvent(row),
      botId: row.bot_id,
      workspaceId: row.workspace_id,
      attempts: row.attempts,
      deliveries: row.deliveries,
      firstDelivery: row.deliveries === 1,
    }));
}

/** An event queued by this process: its id, its bot's workspace, and the claim its engine took on it as it was stored. */
export interface QueuedNotice {
  id: string;
  workspaceId: string;
  claimed?: ClaimedEvent;
}

/** This process's engine, which takes events as they are queued here (see `claimAtInsert`). */
export interface LocalWorker {
  owner: string;
  leaseMs: number;
  /** Whether it takes an event of this workspace now. */
  accepting(workspaceId: string): boolean;
  /** Whether the statement that ends the event it runs may claim the next one of its conversation for it. */
  takesSuccessorOf(eventId: string): boolean;
  /** The end of the event looked for the next one of its conversation (and claimed it if it could). */
  successorLookedFor(eventId: string): void;
}

/** How the engine shares its turns among workspaces, as a claim uses it (engine/leased-work.ts `Shares`). */
export interface WorkspaceShares {
  /** How many more turns of the workspace may start now. */
  roomOf(workspaceId: string): number;
  /** Of each workspace's candidates (its oldest first), the ones to take, at most `limit`. */
  pick<T>(candidates: Map<string, T[]>, limit: number): T[];
}

/** Tries of an event whose turn keeps failing for reasons that may pass, before it is marked failed. */
export const MAX_ATTEMPTS = 8;
/**
 * Deliveries of an event that ended without an outcome (the process running its turn stopped: killed,
 * out of memory, crashed) before it is given up instead of delivered again: an event that kills its runner
 * must not take the service down at every restart. With the attempts, an event is delivered at most
 * MAX_ATTEMPTS + MAX_INTERRUPTED_DELIVERIES times, whatever became of each delivery.
 */
export const MAX_INTERRUPTED_DELIVERIES = 3;

/** How many of the event's earlier deliveries ended without an outcome: neither an end nor a retry recorded. */
export function interruptedDeliveries(event: Pick<ClaimedEvent, 'deliveries' | 'attempts'>): number {
  return event.deliveries - 1 - event.attempts;
}

/** Why an event delivered too many times without an outcome is not run again (its failure reason). */
export function givenUpReason(event: Pick<ClaimedEvent, 'deliveries' | 'attempts'>): string {
  const interrupted = interruptedDeliveries(event);
  const earlier = event.deliveries - 1;
  const stopped = `the process running its turn stopped before the turn ended (it was killed or crashed)`;
  if (event.attempts === 0) return `not run again: delivered ${earlier} times, and each time ${stopped}`;
  return `not run again: delivered ${earlier} times; ${event.attempts} of its turns failed and were tried again, and ${interrupted} times ${stopped}`;
}
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
   * accepts work of its workspace now): no claim to make once it is committed. Only if it can be worked
   * on now (nothing of its conversation pending before it, its bot runs code); otherwise it is left to
   * the claims after the commit.
   */
  async claimAtInsert(db: Executor, eventId: string, workspaceId: string): Promise<ClaimedEvent | undefined> {
    const worker = this.worker;
    if (!worker?.accepting(workspaceId)) return undefined;
    return this.takeOne(claimClaimable, worker.owner, worker.leaseMs, eventId, db);
  }

  /**
   * On a database server, the terms of a claim that the statement storing a pending event makes as it
   * stores it (`claimsAsStored`): this process's engine's, while it takes work of the workspace now.
   */
  termsOfClaimAsStored(workspaceId: string): { owner: string; leaseUntil: string } | undefined {
    const worker = this.worker;
    if (!this.store.sql.roundTrips || !worker?.accepting(workspaceId)) return undefined;
    return { owner: worker.owner, leaseUntil: leaseEnd(worker.leaseMs) };
  }

  /** The event a statement stored, if it claimed it as it did (`claimsAsStored`). */
  claimedAsStored(row: Row<'events'>): ClaimedEvent | undefined {
    return row.lease_owner === null ? undefined : toClaimed([row])[0];
  }

  /**
   * Where the database is in this process (`StoreSql.roundTrips` false) and this process's engine accepts
   * work of the workspace now: stores a new pending event, claimed for the engine if `claimAtInsert`
   * would claim it, in one statement. Undefined where it cannot: the caller inserts, then claims.
   */
  async insertClaimed(
    db: Executor,
    row: NewEventRow,
    workspaceId: string,
  ): Promise<{ claimed: ClaimedEvent | undefined } | undefined> {
    const worker = this.worker;
    if (this.store.sql.roundTrips || row.status !== 'pending' || !worker?.accepting(workspaceId))
      return undefined;
    const leaseUntil = leaseEnd(worker.leaseMs);
    // Its claim is the statement's to decide.
    const { lease_owner: _owner, lease_until: _until, deliveries: _deliveries, ...unclaimed } = row;
    const { rows } = await insertClaiming.execute(db, {
      ...unclaimed,
      owner: worker.owner,
      leaseUntil,
      now: nowIso(),
    });
    const [claimed] = toClaimed(rows.filter((r) => r.lease_owner !== null));
    return { claimed };
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

  /** Whose share of the engine an event takes: its workspace's. */
  groupOf(event: ClaimedEvent): string {
    return event.workspaceId;
  }

  /**
   * Claims up to `limit` events a runtime can work on now, shared among workspaces: pending, of a bot
   * whose code a runtime here runs, not claimed (or claimed by a lapsed lease), each the oldest pending
   * event of its conversation, of the workspaces named (undefined: of every workspace with pending
   * events). Each workspace's oldest such events are read, as many as it has room for and one more (to
   * tell whether more wait), without reading past them; `shares` picks which to take. Answers the events
   * claimed and the workspaces that may have more waiting (those without room included).
   *
   * The workspaces with pending events are found one index seek each (a skip scan of the pending
   * events' index by workspace), not by reading the backlog. `claimNext` is the cheap claim of the
   * event the engine knows of.
   */
  async claimShared(
    owner: string,
    leaseMs: number,
    limit: number,
    workspaces: string[] | undefined,
    shares: WorkspaceShares,
  ): Promise<{ items: ClaimedEvent[]; waiting: string[] }> {
    const now = nowIso();
    const named = workspaces ?? (await this.pendingWorkspaces());
    // A workspace without room is still looked at for one event: whether it waits.
    const wanted = named.map((id) => ({ id, take: Math.min(shares.roomOf(id), limit) + 1 }));
    const candidates = await this.oldestClaimable(wanted, now);
    const picked = new Set(shares.pick(candidates, limit));
    const waiting = [...candidates].filter(([, ids]) => ids.some((id) => !picked.has(id))).map(([ws]) => ws);
    const items = picked.size
      ? await this.take(owner, leaseMs, now, sql`id in (${sql.join([...picked])})`)
      : [];
    return { items, waiting };
  }

  /** The workspaces that have pending events: a recursive skip scan of their partial index, a seek each. */
  private async pendingWorkspaces(): Promise<string[]> {
    const { rows } = await sql<{ id: string | null }>`
      with recursive pending(id) as (
        select min(workspace_id) from events where status = 'pending'
        union all
        select (select min(e.workspace_id) from events e where e.status = 'pending' and e.workspace_id > p.id)
        from pending p where p.id is not null
      )
      select id from pending where id is not null`.execute(this.db);
    return rows.flatMap((r) => (r.id === null ? [] : [r.id]));
  }

  /**
   * The ids of each workspace's oldest claimable events, at most `take` of each, oldest first. Where each
   * statement is a round trip, one statement (the subquery run for each workspace); in a database in
   * this process, which has no such join, a prepared query per workspace (each a few microseconds).
   */
  private async oldestClaimable(
    wanted: { id: string; take: number }[],
    now: string,
  ): Promise<Map<string, string[]>> {
    const candidates = new Map<string, string[]>();
    if (wanted.length === 0) return candidates;
    const storeSql = this.store.sql;
    if (storeSql.roundTrips) {
      const workspaces = storeSql.listRows('w', [
        { name: 'id', kind: 'text', values: wanted.map((w) => w.id) },
        { name: 'take', kind: 'integer', values: wanted.map((w) => w.take) },
      ]);
      const { rows } = await sql<{ workspace_id: string; id: string }>`
        select w.id as workspace_id, h.id
        from ${workspaces} ${storeSql.joinEach(oldestOf(sql`w.id`, sql`w.take`, now), 'h')}
        order by w.id, h.created_at, h.id`.execute(this.db);
      for (const row of rows) {
        const ids = candidates.get(row.workspace_id);
        if (ids) ids.push(row.id);
        else candidates.set(row.workspace_id, [row.id]);
      }
      return candidates;
    }
    for (const { id, take } of wanted) {
      const { rows } = await oldestOfWorkspace.execute(this.db, { workspaceId: id, take, now });
      const ids = rows.map((r) => r.id);
      if (ids.length > 0) candidates.set(id, ids);
    }
    return candidates;
  }

  /** After an event's turn: claims the next pending event of its conversation, if it can be worked on now. */
  async claimNext(owner: string, leaseMs: number, after: ClaimedEvent): Promise<ClaimedEvent[]> {
    if (after.conversationId === undefined) return [];
    const now = nowIso();
    const conversation = sql`${after.conversationId}`;
    // Where each statement is a round trip, the read and the claim are one.
    if (this.store.sql.roundTrips) return this.take(owner, leaseMs, now, successorIn(conversation));
    // In a database in this process: most turns leave nothing behind them, and a read takes no write lock.
    const id = (await oldestPendingIn(conversation).execute(this.db)).rows[0]?.id;
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
    const leaseUntil = leaseEnd(leaseMs);
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
    const leaseUntil = leaseEnd(leaseMs);
    const { rows } = await claim.execute(db, { owner, leaseUntil, now: nowIso(), id });
    return toClaimed(rows)[0];
  }

  /**
   * This process keeps its claims on the events, but does not count these deliveries: they wait here
   * without having begun (behind an event that runs alone, see Dispatcher). `takeUp` counts them again.
   */
  async setAside(owner: string, eventIds: string[]): Promise<void> {
    await this.countDeliveries(owner, eventIds, -1);
  }

  async takeUp(owner: string, eventIds: string[]): Promise<void> {
    await this.countDeliveries(owner, eventIds, 1);
  }

  private async countDeliveries(owner: string, eventIds: string[], change: number): Promise<void> {
    if (eventIds.length === 0) return;
    await this.db
      .updateTable('events')
      .set((eb) => ({ deliveries: eb('deliveries', '+', change) }))
      .where('id', 'in', eventIds)
      .where('lease_owner', '=', owner)
      .where('status', '=', sql.lit('pending'))
      .execute();
  }

  async renew(owner: string, eventIds: string[], leaseMs: number): Promise<void> {
    if (eventIds.length === 0) return;
    await this.db
      .updateTable('events')
      .set({ lease_until: leaseEnd(leaseMs) })
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
   * Ends an event's processing after another write (a turn's last states). Where statements write in
   * their WITH clauses (a database server's), both are one statement (the write as a data-modifying CTE):
   * one round trip and one commit instead of two. Elsewhere they run one after the other, as two writes.
   * SQLite's turn ends do not come here: `States.writeAtTurnEnd` inserts into the view `state_writes`,
   * whose trigger (migration 0039) writes the states and ends the event as `endEvent` does, in one statement.
   */
  async finishWith(
    eventId: string,
    status: 'processed' | 'ignored',
    write: ((db: Executor) => Compilable & OperationNodeSource) | undefined,
  ): Promise<void> {
    const { db } = this;
    const worker = this.worker;
    if (this.store.sql.roundTrips && worker?.takesSuccessorOf(eventId))
      return this.finishClaimingNext(eventId, status, write, worker);
    if (!write) return this.finish(eventId, status);
    if (this.store.sql.writesInWith) {
      const end: EventEnd = { eventId, status, failureReason: null, now: nowIso() };
      await sql`with written as (${write(db)}) ${endEvent(db, end)}`.execute(db);
      return;
    }
    await db.executeQuery(write(db));
    await this.finish(eventId, status);
  }

  /**
   * `finishWith` where each statement is a round trip, for an event this process's engine runs: the same
   * statement claims the next pending event of its conversation for the engine (`claimNext`'s claim,
   * which then has nothing to do), one round trip less a turn. Its snapshot may lack an event committed
   * while it ran, whose own claim found this one still running: every pending event of a conversation
   * takes the conversation's row as it is stored (`Events.stamp`, a message's count), so the statement
   * takes that row too, and a row changed since its snapshot means such an event may be there. Then the
   * claim after the end (`claimNext`) looks again, as it did before every successor.
   */
  private async finishClaimingNext(
    eventId: string,
    status: 'processed' | 'ignored',
    write: ((db: Executor) => Compilable & OperationNodeSource) | undefined,
    worker: LocalWorker,
  ): Promise<void> {
    const { db } = this;
    const now = nowIso();
    const end = endEvent(db, { eventId, status, failureReason: null, now }).returning('conversation_id');
    const conversationId = sql`(select conversation_id from ended)`;
    const { rows } = await sql<SuccessorRow>`
      with ${write ? sql`written as (${write(db)}),` : sql``}
        ended as (${end}),
        held as (${holdConversation(conversationId)}),
        claimed as (${claimWhere(worker.owner, leaseEnd(worker.leaseMs), now, successorIn(conversationId, eventId))})
      select c.*, (select version from held) as held_version,
        ${versionSeen(conversationId)} as seen_version
      from (select 1) one left join claimed c on true`.execute(db);
    const [row] = rows;
    if (!row) return;
    if (row.id !== null) {
      const [claimed] = toClaimed([row]);
      if (claimed) this.notify([{ id: claimed.id, workspaceId: claimed.workspaceId, claimed }]);
    }
    if (row.held_version === row.seen_version) worker.successorLookedFor(eventId);
  }

  /**
   * At start: when this process alone uses the database, every claim was made by an earlier run of this
   * very process, so none holds any more. Where processes share it, other processes' claims are theirs.
   */
  async releaseStaleClaims(): Promise<void> {
    if (!this.store.sql.oneProcess) return;
    await this.db
      .updateTable('events')
      .set({ lease_owner: null, lease_until: null })
      .where('status', '=', sql.lit('pending'))
      .where('lease_owner', 'is not', null)
      .execute();
  }
}
