import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import { SEND_FOR_MS } from '../domain/webhooks/sends.ts';

/** How often due scheduled events, expired states and timed-out workflows are looked for. */
export const SWEEP_INTERVAL_MS = 200;
/** How often old live signals and bot log lines are removed. */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/** How long what piles up is kept (PARLEY_*_RETENTION settings). */
export interface Retention {
  signalsMs: number;
  botLogsMs: number;
  /** Bot log lines kept per bot, the newest. */
  botLogLines: number;
}
/** How often expired files are deleted, the bytes of deleted contents freed, and handoffs timed out. */
const FILES_INTERVAL_MS = 1000;

/**
 * Fires due scheduled events, expires states and files, times out workflows past their `timeoutAt` and
 * handoffs no agent took, and frees deleted files' bytes. All live in the store, not in timers, so they survive a restart; all
 * transitions are conditional, so several processes may sweep.
 */
export class StoreSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastPrune = 0;
  private lastFiles = 0;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    private readonly retention: Retention,
    private readonly intervalMs = SWEEP_INTERVAL_MS,
  ) {}

  /** Removes what is older than its retention now (the sweep does it every ten minutes). */
  async prune(now = Date.now()): Promise<void> {
    this.lastPrune = now;
    await this.domain.log.prune(this.retention.signalsMs, now);
    await this.domain.botLogs.pruneOlderThan(new Date(now - this.retention.botLogsMs));
    await this.domain.botLogs.pruneBeyond(this.retention.botLogLines);
    // The rows of a deleted bot's tables (its table records went with it).
    await this.domain.tables.dropOrphans();
    await this.domain.webhookIngress.forgetDeliveries(now);
    await this.domain.webhookSends.pruneEnded(new Date(now - SEND_FOR_MS));
    await this.domain.channelSends.pruneEnded(new Date(now - SEND_FOR_MS));
  }

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
      await this.domain.workflows.timeOutDue();
      if (Date.now() - this.lastFiles > FILES_INTERVAL_MS) {
        this.lastFiles = Date.now();
        await this.domain.files.expireDue();
        await this.domain.files.sweepBlobs();
        await this.domain.handoffs.expireDue();
      }
      if (Date.now() - this.lastPrune > PRUNE_INTERVAL_MS) await this.prune();
    } catch (err) {
      this.log.error({ err }, 'store sweep failed; retrying at the next tick');
    }
  }
}
