import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import type { EventsTable } from '../store/schema.ts';
import { toEvent } from '../domain/events.ts';

/** How long a claim on an event holds without renewal: a process that died lets go of its events within this. */
export const LEASE_MS = 15_000;
/** How often the engine looks for work when nothing woke it. */
const POLL_MS = 250;

export interface DispatcherOptions {
  /** Events worked on at once (of different conversations). */
  concurrency: number;
  /** Runs one event's turn; resolves with its final status, rejects with the failure. */
  process(event: EventsTable): Promise<'processed' | 'ignored'>;
}

/**
 * Takes pending events off the durable queue and runs their turns: turns of one conversation one at a
 * time in arrival order, different conversations in parallel. Claims are leases renewed while a turn
 * runs, so events of a process that died are taken up again.
 */
export class Dispatcher {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    private readonly options: DispatcherOptions,
  ) {}

  async start(): Promise<void> {
    // One process per SQLite file: claims left by an earlier run of this process are stale.
    if (this.domain.store.dialect === 'sqlite') await this.domain.queue.releaseAll();
    this.unsubscribe = this.domain.queue.onQueued(() => this.wake());
    this.timers.push(setInterval(() => this.wake(), POLL_MS));
    this.timers.push(
      setInterval(() => {
        void this.domain.queue
          .renew(this.owner, [...this.inFlight.keys()], LEASE_MS)
          .catch((err: unknown) => {
            this.log.warn({ err }, 'could not renew event claims');
          });
      }, LEASE_MS / 3),
    );
    this.wake();
  }

  /** Stops taking events and waits for the turns in flight. */
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
      const claimed = await this.domain.queue.claim(this.owner, LEASE_MS, room);
      for (const event of claimed) {
        const turn = this.runOne(event).finally(() => {
          this.inFlight.delete(event.id);
          this.wake();
        });
        this.inFlight.set(event.id, turn);
      }
    } catch (err) {
      this.log.error({ err }, 'could not claim events');
    }
  }

  private async runOne(row: EventsTable): Promise<void> {
    try {
      const status = await this.options.process(row);
      await this.domain.queue.finish(row.id, status);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.log.warn({ eventId: row.id, botId: row.bot_id, type: toEvent(row).type, reason }, 'event failed');
      await this.domain.queue.finish(row.id, 'failed', reason).catch((e: unknown) => {
        this.log.error({ err: e, eventId: row.id }, 'could not record an event failure');
      });
    }
  }
}
