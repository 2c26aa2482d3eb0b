import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';

/** An item this process queued: its id, its group when known, and the claim it took on it as it was stored. */
export interface Queued<Item> {
  id: string;
  group?: string;
  claimed?: Item;
}

/** A durable queue whose items are claimed with leases: the files to index, the sends to make. */
export interface LeasedQueue<Item extends { id: string }> {
  /** At start: claims this process's earlier runs left behind (where only one process can have made them). */
  releaseStaleClaims(): Promise<void>;
  /** Up to `limit` items this process may work on now, claimed for `leaseMs`; `more`: others wait. */
  claim(owner: string, leaseMs: number, limit: number): Promise<{ items: Item[]; more: boolean }>;
  renew(owner: string, ids: string[], leaseMs: number): Promise<void>;
}

/** How the room for new work is shared among groups (what `SharedQueue.claimShared` is given). */
export interface Shares {
  /** How many more items of `group` may start now: what is left of its share, within the room left. */
  roomOf(group: string): number;
  /**
   * Of each group's candidates (its oldest first), the ones to take, at most `limit`: the groups with the
   * fewest items running first, and of those the one served longest ago, one item at a time (round robin).
   */
  pick<T>(candidates: Map<string, T[]>, limit: number): T[];
}

/** This process's worker, as the queue sees it when it takes items as they are stored (`serveLocally`). */
export interface LocalWorker {
  owner: string;
  leaseMs: number;
  /** Whether it takes an item of `group` now. */
  accepting(group: string): boolean;
  /**
   * Whether the queue may claim the successor of `itemId` (a running item of this worker's) in the
   * statement that ends the item: only while nothing is known to wait for the place it leaves, which a
   * claim after it would share among the groups instead.
   */
  takesSuccessorOf(itemId: string): boolean;
  /** The ending of `itemId` looked for its successor, and claimed it if it could: none is looked for after. */
  successorLookedFor(itemId: string): void;
}

/**
 * A durable queue whose items belong to groups (the events of each workspace) that share the workers:
 * each group may hold at most its share of them, and the room that frees up goes round the groups that
 * wait, so a group with a backlog of thousands does not hold up the others.
 */
export interface SharedQueue<Item extends { id: string }> {
  releaseStaleClaims(): Promise<void>;
  renew(owner: string, ids: string[], leaseMs: number): Promise<void>;
  groupOf(item: Item): string;
  /**
   * Claims up to `limit` items of the `groups` named (undefined: of any group), chosen with `shares`;
   * answers them, and the groups that may have more items waiting (those with no room left included).
   */
  claimShared(
    owner: string,
    leaseMs: number,
    limit: number,
    groups: string[] | undefined,
    shares: Shares,
  ): Promise<{ items: Item[]; waiting: string[] }>;
  /** What may be worked on now that `item`'s work is done (its successor), cheaper than a claim. */
  claimNext?(owner: string, leaseMs: number, item: Item): Promise<Item[]>;
  /**
   * The claims on `ids` are kept, but these deliveries of them do not count: they wait here without
   * having begun (behind an item that works alone). `takeUp` counts them again as they begin.
   */
  setAside?(owner: string, ids: string[]): Promise<void>;
  takeUp?(owner: string, ids: string[]): Promise<void>;
  /** Items queued by this process are claimed for it as they are stored, while it is `accepting` them. */
  serveLocally?(worker: LocalWorker): () => void;
}

/** The group of a queue whose items all share the workers alike. */
const ONE_GROUP = '';

/** A queue without groups, as one group. */
function shared<Item extends { id: string }>(queue: LeasedQueue<Item>): SharedQueue<Item> {
  return {
    releaseStaleClaims: () => queue.releaseStaleClaims(),
    renew: (owner, ids, leaseMs) => queue.renew(owner, ids, leaseMs),
    groupOf: () => ONE_GROUP,
    claimShared: async (owner, leaseMs, limit, _groups, shares) => {
      const { items, more } = await queue.claim(owner, leaseMs, Math.min(limit, shares.roomOf(ONE_GROUP)));
      return { items, waiting: more ? [ONE_GROUP] : [] };
    },
  };
}

function isShared<Item extends { id: string }>(
  queue: LeasedQueue<Item> | SharedQueue<Item>,
): queue is SharedQueue<Item> {
  return 'claimShared' in queue;
}

/**
 * The place an item's work holds among the `concurrency` places, which it may leave while it only waits
 * on something outside (a model's answer): others work meanwhile, and it takes a place again to go on.
 */
export interface WorkPlace {
  /**
   * Runs `wait` with the item's place given up while it runs (when fewer than `awayLimit` items are
   * away already), then waits for a place again, before the places taken by new items.
   */
  away<T>(wait: () => Promise<T>): Promise<T>;
}

export interface LeasedWorkOptions<Item> {
  /** What the work is, for the log lines: "event", "indexing". */
  name: string;
  /** Items worked on at once. */
  concurrency: number;
  /**
   * Items of one group worked on at once while other groups have items running or waiting (a shared
   * queue's): the rest is theirs. A group alone may take every place.
   */
  groupConcurrency?: number;
  /** How long a claim holds without renewal, and how often the claims of the work in flight are renewed. */
  leaseMs: number;
  renewMs: number;
  /** How often the queue is looked at when nothing woke the worker. */
  pollMs: number;
  /** Calls `wake` when items are queued (with what is known of them); answers how to stop. */
  subscribe(wake: (queued?: Queued<Item>[]) => void): () => void;
  /**
   * Items whose work may be away from their places at once (waiting outside: see WorkPlace), and of one
   * group while others are there too (`groupConcurrency`'s share of it); none when unset.
   */
  awayLimit?: number;
  /** Works on one claimed item; never rejects (it records its own failures). */
  work(item: Item, owner: string, place: WorkPlace): Promise<void>;
  /**
   * Whether the item must be worked on alone, with nothing else in flight: an item whose earlier work
   * ended with its process (it may be what ended it), so that, if it ends this one too, it ends nothing
   * else's work with it.
   */
  alone?(item: Item): boolean;
}

/**
 * Takes items off a leased queue and works on them, up to `concurrency` at once: woken when items are
 * queued and by a poll, renewing the claims of the work in flight, so that the items of a process that
 * died are taken up by another once its leases lapse.
 *
 * The items of a shared queue belong to groups: while other groups have items running or waiting, one
 * group holds at most `groupConcurrency` of the places (alone, it may take them all). A place that frees
 * up goes to the group with the fewest items running (the one served longest ago among equals) that has
 * any waiting. What waits is known by group: a claim reports the
 * groups it left items of, and an item queued here names its group; the queue is looked through for
 * every group only at start, at each poll, and after a wake-up that names nothing. While nothing waits,
 * what is known is taken cheaply: the items claimed for this process as it queued them (no query at
 * all), and each finished item's successor (`claimNext`).
 *
 * An item that must be worked on `alone` waits until the work in flight has ended, and nothing else
 * starts meanwhile, nor while it runs.
 */
export class LeasedWork<Item extends { id: string }> {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly queue: SharedQueue<Item>;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribes: (() => void)[] = [];
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Items of any group may wait that only a look through the whole queue finds. */
  private unknown = true;
  /** Groups known to have items waiting. */
  private waiting = new Set<string>();
  /** Items claimed for this process as it queued them, waiting for room (their claims are renewed). */
  private readonly ready: Item[] = [];
  /** Items whose work ended, whose successors are not claimed yet. */
  private finished: Item[] = [];
  /** Running items whose successors their ending looked for already (`LocalWorker.successorLookedFor`). */
  private readonly successorsLookedFor = new Set<string>();
  /**
   * Claimed items set aside, in order, while an item works alone or waits to (it waits for the work in
   * flight to end): nothing new starts before them, and nothing after one that must work alone.
   */
  private readonly aside: Item[] = [];
  /** The item being worked on alone, if one is: nothing else starts until it ends. */
  private solo: string | undefined;
  /** Items of each group running or ready (groups with none are left out). */
  private readonly held = new Map<string, number>();
  /** When each group last had an item started (a count of starts), for the round robin. */
  private readonly served = new Map<string, number>();
  private starts = 0;
  /** Items whose work is away from its place: waiting outside, or for a place to go on. */
  private readonly away = new Map<string, number>();
  private awayCount = 0;
  /** Work back from outside, in order, waiting for a place to go on (before any new item starts). */
  private readonly returning: { group: string; resume: () => void }[] = [];
  private readonly shares: Shares = {
    roomOf: (group) => this.roomOf(group),
    pick: (candidates, limit) => this.pick(candidates, limit),
  };

  constructor(
    queue: LeasedQueue<Item> | SharedQueue<Item>,
    private readonly log: FastifyBaseLogger,
    private readonly options: LeasedWorkOptions<Item>,
  ) {
    this.queue = isShared(queue) ? queue : shared(queue);
  }

  async start(): Promise<void> {
    const { name, leaseMs, renewMs, pollMs } = this.options;
    await this.queue.releaseStaleClaims();
    this.unsubscribes.push(this.options.subscribe((queued) => this.onQueued(queued)));
    const local = this.queue.serveLocally?.({
      owner: this.owner,
      leaseMs,
      // Only with room for its group now, and nothing of its group known waiting before it: what is
      // queued when there is no room waits its turn (a claim finds it), not behind newer items.
      accepting: (group) =>
        !this.stopped && !this.unknown && !this.waiting.has(group) && this.roomOf(group) > 0,
      takesSuccessorOf: (id) =>
        !this.stopped && this.inFlight.has(id) && !this.blocked() && !this.unknown && this.waiting.size === 0,
      successorLookedFor: (id) => {
        if (this.inFlight.has(id)) this.successorsLookedFor.add(id);
      },
    });
    if (local) this.unsubscribes.push(local);
    this.timers.push(
      setInterval(() => {
        this.unknown = true;
        this.wake();
      }, pollMs),
    );
    this.timers.push(
      setInterval(() => {
        const held = [...this.inFlight.keys(), ...[...this.ready, ...this.aside].map((item) => item.id)];
        void this.queue
          .renew(this.owner, held, leaseMs)
          .catch((err: unknown) => this.log.warn({ err }, `could not renew ${name} claims`));
      }, renewMs),
    );
    this.wake();
  }

  /** Stops taking items and waits for the work in flight (what waits for room is left to lapse). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    for (const timer of this.timers) clearInterval(timer);
    await this.pumping;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * Places left for an item of `group` now, within the room left: what is left of its share while
   * others (`contenders`, or groups this process knows to run or wait) are there too.
   */
  private roomOf(group: string, contenders = false): number {
    const { concurrency, groupConcurrency = concurrency } = this.options;
    const others = contenders || this.othersThan(group);
    const limit = others ? groupConcurrency : concurrency;
    return Math.max(0, Math.min(this.room(), limit - (this.held.get(group) ?? 0)));
  }

  /** Whether a group other than `group` has items running, ready or known to wait here. */
  private othersThan(group: string): boolean {
    for (const other of this.held.keys()) if (other !== group) return true;
    for (const other of this.waiting) if (other !== group) return true;
    return false;
  }

  /** An item works alone, or items wait set aside: nothing new starts. */
  private blocked(): boolean {
    return this.solo !== undefined || this.aside.length > 0;
  }

  private isAlone(item: Item): boolean {
    return this.options.alone?.(item) ?? false;
  }

  /**
   * Round robin by what each group holds: the candidates ordered by how many items their group would
   * hold with them (then by how long ago the group was served), each group within its room.
   */
  private pick<T>(candidates: Map<string, T[]>, limit: number): T[] {
    const ranked: { item: T; load: number; served: number }[] = [];
    const contenders = candidates.size > 1;
    for (const [group, items] of candidates) {
      const held = this.held.get(group) ?? 0;
      const served = this.served.get(group) ?? -1;
      items
        .slice(0, this.roomOf(group, contenders))
        .forEach((item, i) => ranked.push({ item, load: held + i, served }));
    }
    ranked.sort((a, b) => a.load - b.load || a.served - b.served);
    return ranked.slice(0, limit).map((r) => r.item);
  }

  private onQueued(queued: Queued<Item>[] | undefined): void {
    if (!queued) this.unknown = true;
    for (const { group, claimed } of queued ?? []) {
      if (claimed) {
        this.ready.push(claimed);
        this.hold(this.queue.groupOf(claimed), 1);
      } else if (group === undefined) this.unknown = true;
      else this.waiting.add(group);
    }
    this.wake();
  }

  private wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private room(): number {
    if (this.blocked()) return 0;
    return this.options.concurrency - this.active() - this.ready.length - this.returning.length;
  }

  /** Items whose work holds a place now (those away from theirs are in flight too, without one). */
  private active(): number {
    return this.inFlight.size - this.awayCount;
  }

  /** Some group that waits has room now. */
  private contested(): boolean {
    if (this.unknown) return this.room() > 0;
    for (const group of this.waiting) if (this.roomOf(group) > 0) return true;
    return false;
  }

  private async pump(): Promise<void> {
    const finished = this.finished;
    this.finished = [];
    const { owner } = this;
    const { leaseMs } = this.options;
    try {
      this.resumeReturning();
      await this.takeUpAside();
      // Claimed already: they only wait for room (they were within their group's share when claimed).
      while (!this.blocked() && this.ready.length > 0 && this.active() < this.options.concurrency) {
        const next = this.ready.shift() as Item;
        this.hold(this.queue.groupOf(next), -1);
        this.begin(next);
      }
      if (this.blocked()) {
        // Nothing is claimed meanwhile: successors are looked for once it is over.
        for (const item of finished) this.waiting.add(this.queue.groupOf(item));
        return;
      }
      if (!this.contested() && this.queue.claimNext) {
        // Nothing else waits: each finished item left a place for its successor.
        for (const item of finished)
          for (const next of await this.queue.claimNext(owner, leaseMs, item)) this.begin(next);
        return;
      }
      // Others wait too: the successors take their turn with them.
      for (const item of finished) this.waiting.add(this.queue.groupOf(item));
      if (!this.contested()) return;
      const groups = this.unknown ? undefined : [...this.waiting].filter((g) => this.roomOf(g) > 0);
      const { items, waiting } = await this.queue.claimShared(
        owner,
        leaseMs,
        this.room(),
        groups,
        this.shares,
      );
      if (groups) for (const group of groups) this.waiting.delete(group);
      else this.waiting.clear();
      for (const group of waiting) this.waiting.add(group);
      this.unknown = false;
      for (const item of items) this.begin(item);
      // Took some, and others that wait still have room: look again.
      if (items.length > 0 && this.contested()) this.again = true;
    } catch (err) {
      this.unknown = true;
      this.log.error({ err }, `could not claim ${this.options.name} work; trying again`);
    }
  }

  private hold(group: string, change: number): void {
    const held = (this.held.get(group) ?? 0) + change;
    if (held > 0) this.held.set(group, held);
    else this.held.delete(group);
  }

  /**
   * Starts what was set aside, in order, as far as it may start now: one that must work alone once
   * nothing else runs (then nothing after it), the others while there is room.
   */
  private async takeUpAside(): Promise<void> {
    while (this.solo === undefined && this.aside.length > 0) {
      const next = this.aside[0] as Item;
      const alone = this.isAlone(next);
      if (alone ? this.inFlight.size > 0 : this.active() >= this.options.concurrency) return;
      // Counted again before it begins: a process that stops while it runs must count against it.
      await this.queue.takeUp?.(this.owner, [next.id]);
      this.aside.shift();
      this.launch(next, alone);
    }
  }

  private begin(item: Item): void {
    // This process's own claim that lapsed while its work still runs (a stalled event loop): the
    // claim is renewed again, and the work is not started twice.
    if (this.inFlight.has(item.id)) return;
    const alone = this.isAlone(item);
    if (this.blocked() || (alone && this.inFlight.size > 0)) {
      // It waits (its lease renewed), and this delivery does not count unless it begins.
      this.aside.push(item);
      void this.queue
        .setAside?.(this.owner, [item.id])
        .catch((err: unknown) =>
          this.log.warn({ err }, `could not set a claimed ${this.options.name} aside`),
        );
      return;
    }
    this.launch(item, alone);
  }

  private launch(item: Item, alone: boolean): void {
    const group = this.queue.groupOf(item);
    if (alone) this.solo = item.id;
    this.hold(group, 1);
    this.served.set(group, ++this.starts);
    const place: WorkPlace = { away: (wait) => this.awayFrom(item, group, wait) };
    const work = this.options.work(item, this.owner, place).finally(() => {
      this.inFlight.delete(item.id);
      if (this.solo === item.id) this.solo = undefined;
      this.hold(group, -1);
      if (!this.queue.claimNext) this.waiting.add(group);
      else if (!this.successorsLookedFor.delete(item.id)) this.finished.push(item);
      this.resumeReturning();
      this.wake();
    });
    this.inFlight.set(item.id, work);
  }

  /**
   * Runs `wait` away from the item's place, if it may leave it: not the item working alone (nothing
   * else may start while it runs), and within the away limits; then takes a place again.
   */
  private async awayFrom<T>(item: Item, group: string, wait: () => Promise<T>): Promise<T> {
    if (!this.mayLeave(item, group)) return wait();
    this.awayCount++;
    this.away.set(group, (this.away.get(group) ?? 0) + 1);
    this.hold(group, -1);
    this.wake();
    try {
      return await wait();
    } finally {
      await new Promise<void>((resume) => {
        this.returning.push({ group, resume });
        this.resumeReturning();
      });
    }
  }

  private mayLeave(item: Item, group: string): boolean {
    const { awayLimit = 0, concurrency, groupConcurrency = concurrency } = this.options;
    if (this.solo === item.id || this.awayCount >= awayLimit) return false;
    const groupLimit = this.othersThan(group)
      ? Math.ceil((awayLimit * groupConcurrency) / concurrency)
      : awayLimit;
    return (this.away.get(group) ?? 0) < groupLimit;
  }

  /**
   * Work back from outside goes on as places free up, first come first served: before new items (the
   * room for those leaves them out), and while an item waits to work alone (it waits for them to end);
   * not while one works alone (none was away when it began, so none can be back). The place is taken as
   * the work is resumed, before it goes on.
   */
  private resumeReturning(): void {
    while (this.solo === undefined && this.active() < this.options.concurrency) {
      const back = this.returning.shift();
      if (!back) return;
      this.awayCount--;
      const away = (this.away.get(back.group) ?? 1) - 1;
      if (away > 0) this.away.set(back.group, away);
      else this.away.delete(back.group);
      this.hold(back.group, 1);
      back.resume();
    }
  }
}
