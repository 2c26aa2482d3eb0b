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
  /** Calls `wake` when items are queued; answers how to stop. */
  subscribe(wake: () => void): () => void;
  /** Works on one claimed item; never rejects (it records its own failures). */
  work(item: Item, owner: string): Promise<void>;
}

/**
 * Takes items off a leased queue and works on them, up to `concurrency` at once: woken when items are
 * queued and by a poll, renewing the claims of the work in flight, so that the items of a process that
 * died are taken up by another once its leases lapse.
 */
export class LeasedWork<Item extends { id: string }> {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly queue: LeasedQueue<Item>,
    private readonly log: FastifyBaseLogger,
    private readonly options: LeasedWorkOptions<Item>,
  ) {}

  async start(): Promise<void> {
    const { name, leaseMs, renewMs, pollMs } = this.options;
    await this.queue.releaseStaleClaims();
    this.unsubscribe = this.options.subscribe(() => this.wake());
    this.timers.push(setInterval(() => this.wake(), pollMs));
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
    try {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) return;
      for (const item of await this.queue.claim(this.owner, this.options.leaseMs, room)) {
        // This process's own claim that lapsed while its work still runs (a stalled event loop): the
        // claim is renewed again, and the work is not started twice.
        if (this.inFlight.has(item.id)) continue;
        const work = this.options.work(item, this.owner).finally(() => {
          this.inFlight.delete(item.id);
          this.wake();
        });
        this.inFlight.set(item.id, work);
      }
    } catch (err) {
      this.log.error({ err }, `could not claim ${this.options.name} work; trying again`);
    }
  }
}
