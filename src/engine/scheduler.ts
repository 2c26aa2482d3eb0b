import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';

/** How often due scheduled events and expired states are looked for. */
export const SCHEDULER_INTERVAL_MS = 200;
/** How often old live signals (kept for replay) are removed. */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Fires due scheduled events and expires states. Both live in the store, not in timers, so they
 * survive a restart; both transitions are conditional updates, so several processes may sweep.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastPrune = 0;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = SCHEDULER_INTERVAL_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async tick(): Promise<void> {
    try {
      await this.domain.events.fireDue();
      await this.domain.states.expireDue();
      if (Date.now() - this.lastPrune > PRUNE_INTERVAL_MS) {
        this.lastPrune = Date.now();
        await this.domain.log.prune();
      }
    } catch (err) {
      this.log.error({ err }, 'scheduler sweep failed; retrying at the next tick');
    }
  }
}
