import { sql } from 'kysely';
import type { Executor } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import { nowIso } from '../shared/time.ts';
import { RetryLater } from '../shared/errors.ts';

/** How long one reading of the queue serves the decisions (this process's own admissions counted on top). */
const READ_EVERY_MS = 250;
/** How long an admission may take to be committed: what a reading may not see yet. */
const UNCOMMITTED_MS = 100;
/** The window over which this process's turn ends are counted into a rate. */
const RATE_WINDOW_MS = 2000;
const RATE_BUCKETS = 8;
/** How much each turn's time moves the running mean of turn times (an exponential moving average). */
const TURN_TIME_WEIGHT = 0.05;
/** The longest `Retry-After` admission asks for: a client told more would give up. */
const MAX_RETRY_AFTER_SECONDS = 30;
/**
 * The limit is never under this many events per place of one engine: a conversation's next message waits
 * behind its turn still ending (a closed loop of as many visitors as places is no overload).
 */
const FLOOR_PER_PLACE = 2;
/** Past this many times its limit, the queue is refused to every workspace, under its share or not. */
const CEILING_FACTOR = 2;
/** The reading counts no further than this many times the limit (an index walk bounded by it). */
const READ_BOUND_FACTOR = 10;

export const ADMISSION_REFUSALS = ['share', 'ceiling'] as const;
/**
 * Why a message was refused: `share`, the queue is past its limit and its workspace holds its share of it
 * or more; `ceiling`, the queue is past twice its limit, every workspace is refused.
 */
export type AdmissionRefusal = (typeof ADMISSION_REFUSALS)[number];

export interface AdmissionOptions {
  /** Events waiting for a turn, across the deployment, past which workspaces over their share are refused. */
  backlog: number;
  /** The wait for a turn a new message may expect: the limit shrinks to what the engines run in that time. */
  waitMs: number;
  /** Turns one engine runs at once (`PARLEY_ENGINE_CONCURRENCY`): what its turn times are turned into a rate with. */
  engineConcurrency: number;
}

/** What admission sees now: for `/metrics` and the operators. */
export interface AdmissionState {
  /** Events waiting for a turn (acknowledged, not yet begun), across the deployment, as last read. */
  queued: number;
  /** Requests of this process let in that have not stored their event yet: counted in the queue too. */
  entering: number;
  /** Past it, workspaces over their share of it are refused. */
  limit: number;
  /** Turns the deployment's engines end a second, as this process estimates it. */
  turnsPerSecond: number;
  /** Engines with turns in flight, as last read (at least 1). */
  engines: number;
}

/**
 * A request let in before it waits for a connection (`Admission.enter`): counted in the queue until it
 * leaves, its event then stored (and counted by `admit`) or not.
 */
export interface AdmissionEntry {
  /** Idempotent: the request is done (committed, refused or failed) or its transaction counted it. */
  leave(): void;
}

/** Told of each decision (the metrics count them). */
export type AdmissionListener = (
  decision: { admitted: true } | { admitted: false; reason: AdmissionRefusal },
) => void;

/**
 * The pending events, by workspace and by the engine whose live claim they hold ('' for none: waiting for
 * a turn), counted up to `upTo` rows of the pending index.
 */
const readQueue = prepare(
  ['now', 'upTo'],
  (_db, a: { now: string; upTo: number }) =>
    sql<{
      workspace_id: string;
      owner: string;
      pending: number | string;
    }>`select workspace_id, owner, count(*) as pending from (
    select workspace_id, case when lease_until > ${a.now} then coalesce(lease_owner, '-') else '' end as owner
    from events where status = 'pending' limit ${a.upTo}
  ) p group by workspace_id, owner`,
);

interface Reading {
  /** Events waiting for a turn, in all and by workspace (those with none left out). */
  queued: number;
  byWorkspace: Map<string, number>;
  engines: number;
  /** The reading stopped at its bound: the queue is longer than it counted. */
  truncated: boolean;
  at: number;
}

/**
 * Admission control: a new message (or any event queued from outside) is stored only while the engines
 * can answer it in time. The queue is the events waiting for a turn (pending and not claimed), shared by
 * every process on the store: each reads it at most every 250 ms (one statement over the pending index,
 * bounded) and counts its own admissions on top, less the turns its engine begins, until the next
 * reading. Its limit is the smaller of `backlog` and what the engines run in `waitMs`: this process's
 * turn rate (turns ended over the last 2 s; before any, its places over its mean turn time) times the
 * engines with turns in flight (a per-process measure of a shared pace: replicas alike run alike). Past
 * the limit a workspace is refused while it holds its share of the queue (the limit over the workspaces
 * with events waiting, itself included), so the one causing the load is refused first; past twice the
 * limit, every workspace is. Refused means 429 `RateLimited` with `Retry-After`, before anything is
 * stored: what was acknowledged is kept and answered.
 *
 * A request is decided twice: as it arrives (`enter`, on the last reading, without a statement), and in
 * its transaction (`admit`). Between the two it may wait for a connection of the store; while it waits it
 * counts in the queue, so that a flood of requests waiting for connections is refused at the door, at no
 * cost to the store, instead of waiting its turn to be refused (on PostgreSQL, measured: the requests of
 * a flood waited seconds for a connection, refusals included, and admitted ones went unanswered).
 */
export class Admission {
  private reading: Reading = {
    queued: 0,
    byWorkspace: new Map(),
    engines: 1,
    truncated: false,
    at: -Infinity,
  };
  private reads: Promise<void> | undefined;
  /** This process's own changes to the queue since the last reading began. */
  private changes: { at: number; workspaceId: string; change: number }[] = [];
  /** Requests let in by `enter` that have not left, by workspace, and in all. */
  private readonly entered = new Map<string, number>();
  private enteredTotal = 0;
  private readonly ends = new Array<number>(RATE_BUCKETS).fill(0);
  private bucketAt = 0;
  private meanTurnMs: number | undefined;

  constructor(
    private readonly options: AdmissionOptions,
    /**
     * Where `enter` reads the queue, in the background: a connection apart from the requests' (which wait
     * in a flood).
     */
    private readonly reader: Executor,
    private readonly listener: AdmissionListener = () => {},
  ) {}

  /**
   * Decides a request as it arrives, on the last reading (read again in the background when stale): throws
   * `RetryLater` as `admit` would; otherwise the request counts in the queue until it leaves.
   */
  enter(workspaceId: string): AdmissionEntry {
    if (Date.now() - this.reading.at >= READ_EVERY_MS) void this.fresh(this.reader).catch(() => undefined);
    this.refuse(workspaceId);
    this.changeEntered(workspaceId, 1);
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.changeEntered(workspaceId, -1);
      },
    };
  }

  private changeEntered(workspaceId: string, change: number): void {
    const own = (this.entered.get(workspaceId) ?? 0) + change;
    if (own > 0) this.entered.set(workspaceId, own);
    else this.entered.delete(workspaceId);
    this.enteredTotal += change;
  }

  /**
   * Throws `RetryLater` when the queue is past its limit and the workspace over its share; otherwise
   * counts its event as waiting until the next reading (the requests decided meanwhile see it).
   */
  async admit(db: Executor, workspaceId: string, entry?: AdmissionEntry): Promise<void> {
    // In the caller's transaction: on SQLite a statement outside it would wait for its commit.
    await this.fresh(db);
    // Its own entry is not one more waiting before it.
    entry?.leave();
    this.refuse(workspaceId);
    this.listener({ admitted: true });
    this.count(workspaceId, 1);
  }

  private refuse(workspaceId: string): void {
    const refusal = this.refusal(workspaceId);
    if (!refusal) return;
    this.listener({ admitted: false, reason: refusal.reason });
    throw new RetryLater(refusal.message, refusal.seconds);
  }

  /**
   * This process's engine began a turn of `workspaceId`'s: its event no longer waits. Kept with the
   * admissions for the next reading: an admission counted on top of a reading that already sees its event
   * claimed is cancelled by its turn's beginning (a closed loop's admissions were counted twice, and
   * refused, for a quarter of a second after each reading).
   */
  turnBegan(workspaceId: string): void {
    this.count(workspaceId, -1);
  }

  private count(workspaceId: string, change: number): void {
    this.changes.push({ at: Date.now(), workspaceId, change });
    this.apply(this.reading, workspaceId, change);
  }

  private apply(reading: Reading, workspaceId: string, change: number): void {
    const own = Math.max(0, (reading.byWorkspace.get(workspaceId) ?? 0) + change);
    reading.queued = Math.max(0, reading.queued + change);
    if (own > 0) reading.byWorkspace.set(workspaceId, own);
    else reading.byWorkspace.delete(workspaceId);
  }

  /** A turn of this process's engine ended after `ms`: the rate and the turn time the limit is made of. */
  turnEnded(ms: number): void {
    const ends = this.bucket();
    ends[0] = (ends[0] ?? 0) + 1;
    this.meanTurnMs =
      this.meanTurnMs === undefined ? ms : this.meanTurnMs + TURN_TIME_WEIGHT * (ms - this.meanTurnMs);
  }

  state(): AdmissionState {
    return {
      queued: this.reading.queued,
      entering: this.enteredTotal,
      limit: this.limit(),
      turnsPerSecond: Math.round(this.turnsPerSecond()),
      engines: this.reading.engines,
    };
  }

  /**
   * Turns the deployment ends a second: this engine's, times the engines busy. This engine's is the more
   * of what it ended over the last window and of its places over its mean turn time. With a queue the
   * engine runs all it can, and the two agree (its places are full, each turn taking the mean); without
   * one, the window's count is what was asked of it, not what it can do: after a quiet while, the first
   * few turns of a burst would make it a turn or two a second, and the burst be refused.
   */
  private turnsPerSecond(): number {
    const measured = (this.bucket().reduce((sum, n) => sum + n, 0) * 1000) / RATE_WINDOW_MS;
    const fromTurnTime =
      this.meanTurnMs === undefined
        ? 0
        : (this.options.engineConcurrency * 1000) / Math.max(1, this.meanTurnMs);
    return Math.max(measured, fromTurnTime) * this.reading.engines;
  }

  /**
   * The queue's limit now: `backlog`, or fewer when the engines would not run that many in `waitMs`; never
   * under twice one engine's places. Before any turn ended here there is nothing to estimate with: `backlog`.
   */
  private limit(): number {
    const { backlog, waitMs, engineConcurrency } = this.options;
    if (this.meanTurnMs === undefined) return backlog;
    const inTime = Math.floor((this.turnsPerSecond() * waitMs) / 1000);
    return Math.min(backlog, Math.max(FLOOR_PER_PLACE * engineConcurrency, inTime));
  }

  private refusal(
    workspaceId: string,
  ): { reason: AdmissionRefusal; message: string; seconds: number } | undefined {
    const { byWorkspace, truncated } = this.reading;
    const queued = this.reading.queued + this.enteredTotal;
    const limit = this.limit();
    if (queued < limit && !truncated) return undefined;
    const seconds = this.retryAfter(queued - limit + 1);
    // The webchat shows this text to the visitor as it is: it speaks to them, and the metrics to operators.
    const message = `Too many messages are waiting for an answer: please send yours again in ${seconds} s`;
    if (truncated || queued >= CEILING_FACTOR * limit) return { reason: 'ceiling', seconds, message };
    const own = (byWorkspace.get(workspaceId) ?? 0) + (this.entered.get(workspaceId) ?? 0);
    const workspaces = new Set([...byWorkspace.keys(), ...this.entered.keys()]).size;
    const share = limit / (workspaces + (own === 0 ? 1 : 0));
    if (own < share) return undefined;
    return { reason: 'share', seconds, message };
  }

  /** Seconds until the engines have run `excess` more turns than are queued now (at least 1). */
  private retryAfter(excess: number): number {
    const rate = this.turnsPerSecond();
    const seconds = rate > 0 ? Math.ceil(excess / rate) : 1;
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
  }

  /** Reads the queue when the last reading is older than READ_EVERY_MS; one reading at a time. */
  private async fresh(db: Executor): Promise<void> {
    if (Date.now() - this.reading.at < READ_EVERY_MS) return;
    if (this.reads) return; // another request reads it: decide on the last reading meanwhile
    this.reads = this.read(db).finally(() => {
      this.reads = undefined;
    });
    await this.reads;
  }

  private async read(db: Executor): Promise<void> {
    const upTo = Math.max(this.options.backlog, this.options.engineConcurrency) * READ_BOUND_FACTOR;
    const at = Date.now();
    const { rows } = await readQueue.execute(db, { now: nowIso(), upTo });
    const byWorkspace = new Map<string, number>();
    const owners = new Set<string>();
    let queued = 0;
    let counted = 0;
    for (const row of rows) {
      const pending = Number(row.pending);
      counted += pending;
      if (row.owner === '') {
        queued += pending;
        byWorkspace.set(row.workspace_id, (byWorkspace.get(row.workspace_id) ?? 0) + pending);
      } else if (row.owner !== '-') owners.add(row.owner);
    }
    const reading: Reading = {
      queued,
      byWorkspace,
      engines: Math.max(1, owners.size),
      truncated: counted >= upTo,
      at,
    };
    // What this process admitted shortly before the reading began, or since, may not be committed in what
    // it read (another request's transaction): counted on top, until the next reading (some twice: on the
    // safe side).
    this.changes = this.changes.filter((c) => c.at >= at - UNCOMMITTED_MS);
    for (const c of this.changes) this.apply(reading, c.workspaceId, c.change);
    this.reading = reading;
  }

  /** The current bucket of turn ends (index 0), the older ones shifted along as time passed. */
  private bucket(): number[] {
    const width = RATE_WINDOW_MS / RATE_BUCKETS;
    const now = Math.floor(Date.now() / width);
    const passed = Math.min(RATE_BUCKETS, now - this.bucketAt);
    if (passed > 0) {
      this.ends.splice(RATE_BUCKETS - passed, passed);
      this.ends.unshift(...new Array<number>(passed).fill(0));
      this.bucketAt = now;
    }
    return this.ends;
  }
}
