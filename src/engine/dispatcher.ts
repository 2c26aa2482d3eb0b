import type { FastifyBaseLogger } from 'fastify';
import type { Histogram } from 'prom-client';
import type { Domain } from '../domain/index.ts';
import {
  givenUpReason,
  interruptedDeliveries,
  MAX_INTERRUPTED_DELIVERIES,
} from '../domain/queue/event-queue.ts';
import type { ClaimedEvent } from '../domain/queue/event-queue.ts';
import { isPermanentFailure, reasonOf } from './failures.ts';
import { LeasedWork } from './leased-work.ts';
import type { WorkPlace } from './leased-work.ts';

/**
 * How long a claim on an event holds without renewal: another process takes over the events of one that
 * died within this. Short, so a crash delays conversations by seconds; renewed often, so that a live
 * process keeps its claims through a stall of its event loop of up to LEASE_MS - RENEW_MS.
 */
export const LEASE_MS = 2500;
const RENEW_MS = 500;
/** How often the engine looks for work when nothing woke it. */
const POLL_MS = 250;

/** How a turn ended, and whether it stored that end itself, with its last write (else the dispatcher does). */
export interface TurnEnd {
  status: 'processed' | 'ignored';
  recorded: boolean;
}

export interface DispatcherOptions {
  /** Events worked on at once (of different conversations). */
  concurrency: number;
  /** Events of one workspace worked on at once, at most: the rest of `concurrency` is kept for others. */
  workspaceConcurrency: number;
  /** Where each turn's time is recorded, by outcome. */
  turns: Histogram<'outcome'>;
  /** Turns that may wait on a model away from their places at once (see WorkPlace). */
  waitingTurns: number;
  /** Runs one event's turn in its place; resolves with its end, rejects with the failure. */
  process(event: ClaimedEvent, place: WorkPlace): Promise<TurnEnd>;
}

/**
 * Takes pending events off the durable queue and runs their turns: turns of one conversation one at a
 * time in arrival order (the queue claims only the oldest pending event of each), different conversations
 * in parallel, workspaces in turn (each within its share: see LeasedWork). Claims are leases renewed
 * while a turn runs, so events of a process that died are taken up again; an event whose deliveries kept
 * ending that way is given up instead (MAX_INTERRUPTED_DELIVERIES).
 */
export class Dispatcher {
  private readonly work: LeasedWork<ClaimedEvent>;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    private readonly options: DispatcherOptions,
  ) {
    this.work = new LeasedWork(domain.queue, log, {
      name: 'event',
      concurrency: options.concurrency,
      groupConcurrency: options.workspaceConcurrency,
      awayLimit: options.waitingTurns,
      leaseMs: LEASE_MS,
      renewMs: RENEW_MS,
      pollMs: POLL_MS,
      subscribe: (wake) =>
        domain.queue.onQueued((queued) =>
          wake(queued?.map(({ id, workspaceId, claimed }) => ({ id, group: workspaceId, claimed }))),
        ),
      work: (event, _owner, place) =>
        interruptedDeliveries(event) >= MAX_INTERRUPTED_DELIVERIES
          ? this.giveUp(event)
          : this.runOne(event, place),
      // An event whose turn was interrupted may be what stopped the process: if it stops this one too,
      // no other turn goes down with it (and comes closer to being given up for it).
      alone: (event) => interruptedDeliveries(event) > 0,
    });
  }

  start(): Promise<void> {
    return this.work.start();
  }

  /** Stops taking events and waits for the turns in flight. */
  stop(): Promise<void> {
    return this.work.stop();
  }

  private async runOne(row: ClaimedEvent, place: WorkPlace): Promise<void> {
    const timer = this.options.turns.startTimer();
    const started = performance.now();
    this.domain.admission?.turnBegan(row.workspaceId);
    // Admission control makes its estimate of the engines' pace from the turns that ended.
    const ended = () => this.domain.admission?.turnEnded(performance.now() - started);
    try {
      const { status, recorded } = await this.options.process(row, place);
      if (!recorded) await this.domain.queue.finish(row.id, status);
      timer({ outcome: status });
      ended();
      return;
    } catch (err) {
      const permanent = isPermanentFailure(err);
      timer({ outcome: permanent ? 'failed' : 'retrying' });
      ended();
      if (permanent) await this.fail(row, err);
      else await this.retry(row, err);
    }
  }

  /**
   * An event whose earlier deliveries each ended without an outcome (the process running its turn
   * stopped: killed, out of memory, crashed): running it again could stop this one too, so it is marked
   * failed without running, and the bot's logs say why.
   */
  private async giveUp(row: ClaimedEvent): Promise<void> {
    const reason = givenUpReason(row);
    this.log.error(
      { eventId: row.id, botId: row.botId, type: row.type, deliveries: row.deliveries - 1, reason },
      'an event was given up: its turn never ended',
    );
    this.domain.botLogs.append(row.botId, [
      {
        level: 'error',
        message: `The turn of event ${row.id} (${row.type}) was given up: ${reason}`,
        ...(row.conversationId !== undefined && { conversationId: row.conversationId }),
        ...(row.userId !== undefined && { userId: row.userId }),
        eventId: row.id,
      },
    ]);
    await this.sendFallback(row);
    try {
      await this.domain.queue.finish(row.id, 'failed', reason);
    } catch (finishErr) {
      // The claim lapses: the event is claimed again, and given up then.
      this.log.error({ err: finishErr, eventId: row.id }, 'could not record that an event was given up');
    }
  }

  private async fail(row: ClaimedEvent, err: unknown): Promise<void> {
    const reason = reasonOf(err);
    this.log.warn({ eventId: row.id, botId: row.botId, type: row.type, reason }, 'event failed');
    await this.sendFallback(row);
    try {
      await this.domain.queue.finish(row.id, 'failed', reason);
    } catch (finishErr) {
      // The claim lapses and the turn runs again: it fails the same way, and is recorded then.
      this.log.error({ err: finishErr, eventId: row.id }, 'could not record an event failure');
    }
  }

  /**
   * The visitor's fallback message, for an event given up. Sent before the failure is recorded where
   * the dispatcher records it, so a process that dies between the two leaves the event to be failed
   * again, which finds the message sent. A failure to send it is logged; the event fails all the same.
   */
  private async sendFallback(row: ClaimedEvent): Promise<void> {
    try {
      await this.domain.fallbackReplies.send(row);
    } catch (err) {
      this.log.error(
        { err, eventId: row.id, botId: row.botId },
        'could not send the fallback message of a failed turn',
      );
    }
  }

  /** A failure that may pass (the store, a fault of the server): the event waits, then is tried again. */
  private async retry(row: ClaimedEvent, err: unknown): Promise<void> {
    try {
      const outcome = await this.domain.queue.retryLater(row, reasonOf(err));
      // Only once it is given up: a try that a later one redeems must not leave the visitor both.
      if (outcome === 'failed') await this.sendFallback(row);
      this.log.error(
        { err, eventId: row.id, botId: row.botId, attempts: row.attempts + 1, outcome },
        outcome === 'retrying'
          ? 'a turn failed; it will be tried again'
          : 'a turn failed too many times; giving up',
      );
    } catch (queueErr) {
      // The store is unreachable: the claim lapses, and the event is claimed again once it answers.
      this.log.error(
        { err, queueErr, eventId: row.id },
        'a turn failed, and so did recording it; it will be tried again',
      );
    }
  }
}
