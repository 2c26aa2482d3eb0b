import type { FastifyBaseLogger } from 'fastify';
import type { ChannelSendOutcome, ClaimedChannelSend } from '../domain/integrations/channel-sends.ts';
import type { Domain } from '../domain/index.ts';
import { LeasedWork } from './leased-work.ts';

/** How long a claim on a send holds without renewal: longer than one call of an integration takes. */
const SEND_LEASE_MS = 90_000;
/** How often due sends are looked for when nothing woke the sender. */
const POLL_MS = 1000;
/** Sends in flight at once from one process. */
const CONCURRENCY = 8;

/**
 * Hands bots' messages in conversations of integrations to the integrations' channels, from their
 * durable queue (domain/integrations/channel-sends.ts): tried again with a growing wait while the
 * integration fails, given up when it refuses.
 */
export class ChannelSender {
  private readonly work: LeasedWork<ClaimedChannelSend>;

  constructor(
    domain: Domain,
    log: FastifyBaseLogger,
    send: (item: ClaimedChannelSend) => Promise<ChannelSendOutcome>,
  ) {
    const sends = domain.channelSends;
    this.work = new LeasedWork(sends, log, {
      name: 'channel send',
      concurrency: CONCURRENCY,
      leaseMs: SEND_LEASE_MS,
      renewMs: SEND_LEASE_MS / 3,
      pollMs: POLL_MS,
      subscribe: (wake) => sends.subscribe(() => wake()),
      work: async (item, owner) => {
        const outcome = await send(item).catch((err: unknown): ChannelSendOutcome => ({
          retry: String(err),
        }));
        await sends.record(owner, item, outcome).catch((err: unknown) => {
          // The store failed: the claim lapses and the message is handed over again.
          log.error({ err, sendId: item.id }, 'a channel send could not be recorded; it will be made again');
        });
      },
    });
  }

  start(): Promise<void> {
    return this.work.start();
  }

  stop(): Promise<void> {
    return this.work.stop();
  }
}
