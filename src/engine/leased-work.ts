import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';

/** A durable queue whose items are claimed with leases: the events of bots, the files to index. */
export interface LeasedQueue<Item extends { id: string }> {
  /** At start: claims this process's earlier runs left behind (where only one process can have made them). */
  releaseStaleClaims(): Promise<void>;
  /** Items this process may work on now, claimed for `leaseMs`. */
  claim(owner: string, leaseMs: number, limit: number): Promise<Item[]>;
  renew(owner: string, ids: string[], leaseMs: number): Promise<void>;
  /** The named items (queued by this process) that may be worked on now: cheaper than a `claim`. */
  claimQueued?(owner: string, leaseMs: number, ids: string[]): Promise<Item[]>;
  /** What may be worked on now that `item`'s work is done (its successor), cheaper than a `claim`. */
  claimNext?(owner: string, leaseMs: number, item: Item): Promise<Item[]>;
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
  /** Calls `wake` when items are queued (with their ids when known); answers how to stop. */
  subscribe(wake: (queued?: string[]) => void): () => void;
  /** Works on one claimed item; never rejects (it records its own failures). */
  work(item: Item, owner: string): Promise<void>;
}

/**
 * Takes items off a leased queue and works on them, up to `concurrency` at once: woken when items are
 * queued and by a poll, renewing the claims of the work in flight, so that the items of a process that
 * died are taken up by another once its leases lapse.
 *
 * Looking through the whole queue (`claim`) is its most expensive query, so it runs only when something
 * may wait that nothing else names: at start, at each poll, after a wake-up without ids, and when work
 * was left for want of room. Otherwise the queue's cheap claims take what is known: the items this
 * process just queued (`claimQueued`), and each finished item's successor (`claimNext`).
 */
export class LeasedWork<Item extends { id: string }> {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Items may wait that only a look through the whole queue finds. */
  private backlog = true;
  /** Items this process queued, not claimed yet. */
  private queued = new Set<string>();
  /** Items whose work ended, whose successors are not claimed yet. */
  private finished: Item[] = [];

  constructor(
    private readonly queue: LeasedQueue<Item>,
    private readonly log: FastifyBaseLogger,
    private readonly options: LeasedWorkOptions<Item>,
  ) {}

  async start(): Promise<void> {
    const { name, leaseMs, renewMs, pollMs } = this.options;
    await this.queue.releaseStaleClaims();
    this.unsubscribe = this.options.subscribe((queued) => {
      if (queued && this.queue.claimQueued) for (const id of queued) this.queued.add(id);
      else this.backlog = true;
      this.wake();
    });
    this.timers.push(
      setInterval(() => {
        this.backlog = true;
        this.wake();
      }, pollMs),
    );
    this.timers.push(
      setInterval(() => {
        void this.queue
          .renew(this.owner, [...this.inFlight.keys()], leaseMs)
          .catch((err: unknown) => this.log.warn({ err }, `could not renew ${name} claims`));
      }, renewMs),
    );
    this.wake();
  }

  /** Stops taking items and waits for the work in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const timer of this.timers) clearInterval(timer);
    await this.pumping;
    await Promise.allSettled([...this.inFlight.values()]);
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

  private async pump(): Promise<void> {
    const queued = [...this.queued];
    const finished = this.finished;
    this.queued = new Set();
    this.finished = [];
    try {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) {
        // What is known to wait is left to the look through the queue once work ends.
        if (queued.length > 0 || finished.length > 0) this.backlog = true;
        return;
      }
      const { owner } = this;
      const { leaseMs } = this.options;
      let claimed: Item[] = [];
      if (this.backlog || !this.queue.claimNext || queued.length + finished.length > room) {
        // The whole queue holds whatever the cheap claims would have found.
        this.backlog = false;
        claimed = await this.queue.claim(owner, leaseMs, room);
        if (claimed.length === room) this.backlog = true;
      } else {
        if (queued.length > 0 && this.queue.claimQueued)
          claimed.push(...(await this.queue.claimQueued(owner, leaseMs, queued)));
        for (const item of finished) claimed.push(...(await this.queue.claimNext(owner, leaseMs, item)));
      }
      for (const item of claimed) this.begin(item);
    } catch (err) {
      this.backlog = true;
      this.log.error({ err }, `could not claim ${this.options.name} work; trying again`);
    }
  }

  private begin(item: Item): void {
    // This process's own claim that lapsed while its work still runs (a stalled event loop): the
    // claim is renewed again, and the work is not started twice.
    if (this.inFlight.has(item.id)) return;
    const work = this.options.work(item, this.owner).finally(() => {
      this.inFlight.delete(item.id);
      if (this.queue.claimNext) this.finished.push(item);
      else this.backlog = true;
      this.wake();
    });
    this.inFlight.set(item.id, work);
  }
}
