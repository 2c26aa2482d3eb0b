import http from 'node:http';
import https from 'node:https';
import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import type { ClaimedSend, SendOutcome } from '../domain/webhooks/sends.ts';
import { signatureHeaders } from '../domain/webhooks/signatures.ts';
import { literalAddress } from '../domain/shared/public-addresses.ts';
import { checkedLookup, publicOnly } from '../domain/shared/public-lookup.ts';
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

/** Where webhooks may go while PARLEY_WEBHOOK_PRIVATE_TARGETS is off. */
const publicTargets = publicOnly('PARLEY_WEBHOOK_PRIVATE_TARGETS is off');
const publicLookup = checkedLookup(publicTargets);

/** One attempt: the signed POST, and what came of it. Never rejects. */
function attempt(send: ClaimedSend, allowPrivateTargets: boolean): Promise<SendOutcome> {
  const url = new URL(send.url);
  const literal = literalAddress(url);
  // A literal address is connected to without a lookup: it is checked here.
  const refused = allowPrivateTargets || literal === undefined ? undefined : publicTargets(literal);
  if (refused !== undefined) return Promise.resolve({ error: `${literal} is ${refused}` });
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(send.body)),
    'user-agent': `Parley-Webhooks/${VERSION}`,
    // The delivery's id stays the same on each attempt: the receiver can tell a repeat.
    ...signatureHeaders(send.secret, send.body, send.id),
  };
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        headers,
        // A connection of its own: a kept-alive one could have been made to another address.
        agent: false,
        ...(!allowPrivateTargets && { lookup: publicLookup }),
      },
      (response) => {
        // What the receiver says beyond its status is not read.
        response.resume();
        resolve({ statusCode: response.statusCode ?? 0 });
        request.destroy();
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${SEND_TIMEOUT_MS / 1000} s`)),
      SEND_TIMEOUT_MS,
    );
    request.on('error', (err) => resolve({ error: err.message }));
    request.on('close', () => clearTimeout(timer));
    request.end(send.body);
  });
}

/**
 * Posts the bot's events to the URLs subscribed to them (outgoing webhooks), from their durable queue
 * (domain/webhooks/sends.ts): signed, tried again with a growing wait for a day, each outcome recorded
 * as the subscription's last delivery.
 */
export class WebhookSender {
  private readonly work: LeasedWork<ClaimedSend>;

  constructor(domain: Domain, log: FastifyBaseLogger, options: { allowPrivateTargets: boolean }) {
    const sends = domain.webhookSends;
    this.work = new LeasedWork(sends, log, {
      name: 'webhook delivery',
      concurrency: CONCURRENCY,
      leaseMs: SEND_LEASE_MS,
      renewMs: SEND_LEASE_MS / 3,
      pollMs: POLL_MS,
      subscribe: () => () => {},
      work: async (send, owner) => {
        const outcome = await attempt(send, options.allowPrivateTargets);
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
