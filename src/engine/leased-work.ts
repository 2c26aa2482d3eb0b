import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';

/** Items queued by this process remembered by id while they wait for room; past this, the queue is looked through. */
const KNOWN_ITEMS_MAX = 10_000;

/** An item this process queued: its id, and the claim it took on it as it was stored, if it took one. */
export interface Queued<Item> {
  id: string;
  claimed?: Item;
}

/** A durable queue whose items are claimed with leases: the events of bots, the files to index. */
export interface LeasedQueue<Item extends { id: string }> {
  /** At start: claims this process's earlier runs left behind (where only one process can have made them). */
  releaseStaleClaims(): Promise<void>;
  /** Up to `limit` items this process may work on now, claimed for `leaseMs`; `more`: others wait. */
  claim(owner: string, leaseMs: number, limit: number): Promise<{ items: Item[]; more: boolean }>;
  renew(owner: string, ids: string[], leaseMs: number): Promise<void>;
  /** The named items (queued by this process) that may be worked on now: cheaper than a `claim`. */
  claimQueued?(owner: string, leaseMs: number, ids: string[]): Promise<Item[]>;
  /** What may be worked on now that `item`'s work is done (its successor), cheaper than a `claim`. */
  claimNext?(owner: string, leaseMs: number, item: Item): Promise<Item[]>;
  /** Items queued by this process are claimed for it as they are stored, while it `accepting()` work. */
  serveLocally?(worker: { owner: string; leaseMs: number; accepting(): boolean }): () => void;
}

export interface LeasedWorkOptions<Item> {
  /** What the work is, for the log lines: "event", "indexing". */
  name: string;
  /** Items worked on at once. */
  concurrency: number;
  /** How long a claim holds without renewal, and how often the claims of the work in flight are renewed. */
  leaseMs: number;
  renewMs: number;
  /** How often the queue is looked at when nothing woke the worker. */
  pollMs: number;
  /** Calls `wake` when items are queued (with what is known of them); answers how to stop. */
  subscribe(wake: (queued?: Queued<Item>[]) => void): () => void;
  /** Works on one claimed item; never rejects (it records its own failures). */
  work(item: Item, owner: string): Promise<void>;
}

/**
 * Takes items off a leased queue and works on them, up to `concurrency` at once: woken when items are
 * queued and by a poll, renewing the claims of the work in flight, so that the items of a process that
 * died are taken up by another once its leases lapse.
 *
 * Looking through the whole queue (`claim`) is its most expensive query, so it runs only when something
 * may wait that nothing else names: at start, at each poll, after a wake-up without ids, and while it
 * finds more than there was room for. Otherwise what is known is taken cheaply: the items claimed for
 * this process as it queued them (no query at all), the others it queued (`claimQueued`), and each
 * finished item's successor (`claimNext`).
 */
export class LeasedWork<Item extends { id: string }> {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribes: (() => void)[] = [];
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Items may wait that only a look through the whole queue finds. */
  private backlog = true;
  /** Items claimed for this process as it queued them, waiting for room (their claims are renewed). */
  private readonly ready: Item[] = [];
  /** Items this process queued, not claimed yet, in the order they were queued. */
  private readonly queued = new Set<string>();
  /** Items whose work ended, whose successors are not claimed yet. */
  private finished: Item[] = [];

  constructor(
    private readonly queue: LeasedQueue<Item>,
    private readonly log: FastifyBaseLogger,
    private readonly options: LeasedWorkOptions<Item>,
  ) {}

  async start(): Promise<void> {
    const { name, leaseMs, renewMs, pollMs, concurrency } = this.options;
    await this.queue.releaseStaleClaims();
    this.unsubscribes.push(this.options.subscribe((queued) => this.onQueued(queued)));
    const local = this.queue.serveLocally?.({
      owner: this.owner,
      leaseMs,
      // Only with room now, and nothing known waiting before it: what is queued when work is full waits
      // its turn in arrival order (`queued`, then the look through the queue), not behind newer events.
      accepting: () =>
        !this.stopped &&
        !this.backlog &&
        this.queued.size === 0 &&
        this.inFlight.size + this.ready.length < concurrency,
    });
    if (local) this.unsubscribes.push(local);
    this.timers.push(
      setInterval(() => {
        this.backlog = true;
        this.wake();
      }, pollMs),
    );
    this.timers.push(
      setInterval(() => {
        const held = [...this.inFlight.keys(), ...this.ready.map((item) => item.id)];
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

  private onQueued(queued: Queued<Item>[] | undefined): void {
    if (!queued || !this.queue.claimQueued) this.backlog = true;
    for (const { id, claimed } of queued ?? []) {
      if (claimed) this.ready.push(claimed);
      else if (this.queue.claimQueued) this.queued.add(id);
    }
    // More known than work would soon take: the look through the queue finds them.
    if (this.queued.size > KNOWN_ITEMS_MAX) {
      this.queued.clear();
      this.backlog = true;
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
    return this.options.concurrency - this.inFlight.size;
  }

  private async pump(): Promise<void> {
    // Claimed already: they only wait for room.
    for (let next = this.ready[0]; next && this.room() > 0; next = this.ready[0]) {
      this.ready.shift();
      this.begin(next);
    }
    const finished = this.finished;
    this.finished = [];
    const { owner } = this;
    const { leaseMs } = this.options;
    try {
      if (this.backlog || !this.queue.claimNext) {
        // The whole queue holds whatever the cheap claims would have found.
        const room = this.room();
        if (room <= 0) return; // still a backlog: looked through when work ends
        const { items, more } = await this.queue.claim(owner, leaseMs, room);
        this.backlog = more;
        for (const item of items) this.begin(item);
        return;
      }
      // Each finished item left a place for its successor.
      for (const item of finished)
        for (const next of await this.queue.claimNext(owner, leaseMs, item)) this.begin(next);
      const room = this.room();
      if (room > 0 && this.queued.size > 0 && this.queue.claimQueued) {
        // The oldest known first; the others wait for the next place.
        const ids: string[] = [];
        // Not a copy of the whole set: under a backlog it holds thousands, and this runs at each turn's end.
        for (const id of this.queued) {
          if (ids.length === room) break;
          ids.push(id);
        }
        for (const id of ids) this.queued.delete(id);
        for (const item of await this.queue.claimQueued(owner, leaseMs, ids)) this.begin(item);
      }
    } catch (err) {
      this.backlog = true;
      this.log.error({ err }, `could not claim ${this.options.name} work; trying again`);
    }
  }

  private begin(item: Item): void {
    // This process's own claim that lapsed while its work still runs (a stalled event loop): the
    // claim is renewed again, and the work is not started twice.
    if (this.inFlight.has(item.id)) return;
    this.queued.delete(item.id);
    const work = this.options.work(item, this.owner).finally(() => {
      this.inFlight.delete(item.id);
      if (this.queue.claimNext) this.finished.push(item);
      else this.backlog = true;
      this.wake();
    });
    this.inFlight.set(item.id, work);
  }
}
