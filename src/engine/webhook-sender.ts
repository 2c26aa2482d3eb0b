import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import type { ClaimedSend, SendOutcome } from '../domain/webhooks/sends.ts';
import { signatureHeaders } from '../domain/webhooks/signatures.ts';
import { VERSION } from '../version.ts';
import { LeasedWork } from './leased-work.ts';

/** How long a claim on a delivery holds without renewal: longer than one attempt takes. */
export const SEND_LEASE_MS = 30_000;
/** How long a receiver has to answer one attempt. */
export const SEND_TIMEOUT_MS = 10_000;
/** How often due deliveries are looked for. */
const POLL_MS = 500;
/** Deliveries in flight at once from one process: receivers are slow, each waits on the network only. */
const CONCURRENCY = 16;

/** One attempt: the signed POST, and what came of it. Never rejects. */
async function attempt(send: ClaimedSend): Promise<SendOutcome> {
  try {
    const response = await fetch(send.url, {
      method: 'POST',
      body: send.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': `Parley-Webhooks/${VERSION}`,
        // The delivery's id stays the same on each attempt: the receiver can tell a repeat.
        ...signatureHeaders(send.secret, send.body, send.id),
      },
    });
    // What the receiver says beyond its status is not read.
    await response.body?.cancel();
    return { statusCode: response.status };
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return { error: err instanceof Error ? `${err.message}${cause}` : String(err) };
  }
}

/**
 * Posts the bot's events to the URLs subscribed to them (outgoing webhooks), from their durable queue
 * (domain/webhooks/sends.ts): signed, tried again with a growing wait for a day, each outcome recorded
 * as the subscription's last delivery.
 */
export class WebhookSender {
  private readonly work: LeasedWork<ClaimedSend>;

  constructor(domain: Domain, log: FastifyBaseLogger) {
    const sends = domain.webhookSends;
    this.work = new LeasedWork(sends, log, {
      name: 'webhook delivery',
      concurrency: CONCURRENCY,
      leaseMs: SEND_LEASE_MS,
      renewMs: SEND_LEASE_MS / 3,
      pollMs: POLL_MS,
      subscribe: () => () => {},
      work: async (send, owner) => {
        const outcome = await attempt(send);
        await sends.record(owner, send, outcome).catch((err: unknown) => {
          // The store failed: the claim lapses and the delivery is made again (the receiver sees its id twice).
          log.error(
            { err, deliveryId: send.id },
            'a webhook delivery could not be recorded; it will be made again',
          );
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
