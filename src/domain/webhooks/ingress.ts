import type { Store } from '../../store/index.ts';
import type { Events } from '../runtime/events.ts';
import { ApiError, notFound, unauthorized } from '../shared/errors.ts';
import type { JsonObject } from '../shared/schemas.ts';
import { isWebhookId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';
import type { BotWebhooks, ReachedWebhook } from './bot-webhooks.ts';
import type { HandlerAnswer, IntegrationHostSlot } from '../integrations/host.ts';
import type { Installation, Installations } from '../integrations/installations.ts';
import { signatureProblem } from './signatures.ts';

/** The type of the event a request to a bot's webhook becomes. */
export const WEBHOOK_EVENT = 'webhook';

/**
 * Headers a sender names a delivery with, in the order they are looked for: a delivery sent again with
 * the same name is queued once (`webhook-id` is Standard Webhooks', `x-github-delivery` GitHub's).
 */
export const DELIVERY_ID_HEADERS = ['webhook-id', 'idempotency-key', 'x-github-delivery'] as const;

/** How long a delivery's name is remembered: one sent again later is queued again. */
export const DELIVERY_MEMORY_MS = 24 * 60 * 60 * 1000;

/** The longest delivery name kept: a longer header names no delivery. */
const MAX_DELIVERY_ID = 200;

/** A request to the ingress as it came: `path` is what follows the webhook id, `body` its raw bytes. */
export interface WebhookRequest {
  method: string;
  path: string;
  /** The query string, without its `?`. */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface WebhookReceipt {
  eventId: string;
  /** The sender named this delivery before: nothing new was queued. */
  duplicate: boolean;
}

class DuplicateDelivery extends Error {}

/** What a webhook id names: a bot's own webhook, or the webhook of an integration installed on a bot. */
export type ReachedIngress =
  { kind: 'bot'; webhook: ReachedWebhook } | { kind: 'integration'; installation: Installation };

/** A body larger than a webhook's receiver takes: `size` when it is known. */
export function bodyTooLarge(maxBody: number, size?: number): ApiError {
  return new ApiError(
    'PayloadTooLarge',
    `body: a webhook request to a bot holds at most ${maxBody} bytes${size === undefined ? '' : ` (this one has ${size})`}`,
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as the event carries it: as text when it is UTF-8, else in base64. */
function bodyOf(body: Buffer): { body: string; bodyEncoding?: 'base64' } {
  try {
    return { body: utf8.decode(body) };
  } catch {
    return { body: body.toString('base64'), bodyEncoding: 'base64' };
  }
}

function headersOf(headers: WebhookRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function deliveryIdOf(headers: WebhookRequest['headers']): string | undefined {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && value.length > 0 && value.length <= MAX_DELIVERY_ID) return value;
  }
  return undefined;
}

/**
 * Requests to a bot's webhook (`{base}/webhooks/{id}/…`): verified, then queued as a `webhook` event of
 * the bot, which its hooks, triggers or SDK handlers take like any other event.
 */
export class WebhookIngress {
  constructor(
    private readonly store: Store,
    private readonly webhooks: BotWebhooks,
    private readonly installations: Installations,
    private readonly events: Events,
    private readonly host: IntegrationHostSlot,
  ) {}

  /** The webhook a request names, before its body is read. */
  async reach(webhookId: string): Promise<ReachedIngress> {
    const webhook = await this.webhooks.reach(webhookId);
    if (webhook) return { kind: 'bot', webhook };
    const installation = isWebhookId(webhookId) ? await this.installations.reach(webhookId) : undefined;
    if (installation?.enabled) return { kind: 'integration', installation };
    throw notFound('Webhook', webhookId);
  }

  /**
   * A request to an integration's webhook, handed to its handler (`webhook_received`) as it came: the
   * integration verifies it, and its answer goes back to the sender.
   */
  async forward(installation: Installation, request: WebhookRequest): Promise<HandlerAnswer> {
    return this.host.get().webhook(installation, {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: headersOf(request.headers),
      body: request.body.toString('utf8'),
    });
  }

  /** `maxBody`: the largest body an event may carry (an event is a Runtime API payload). */
  async receive(webhook: ReachedWebhook, request: WebhookRequest, maxBody: number): Promise<WebhookReceipt> {
    if (request.body.length > maxBody) throw bodyTooLarge(maxBody, request.body.length);
    if (webhook.verification === 'standard-webhooks') {
      const problem = signatureProblem(webhook.signingSecret, request.headers, request.body);
      if (problem !== undefined) {
        throw unauthorized(
          `webhook-signature: ${problem} (requests to this webhook are signed with the bot's signing secret, in the Standard Webhooks format)`,
        );
      }
    }
    const payload: JsonObject = {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: headersOf(request.headers),
      ...bodyOf(request.body),
    };
    const deliveryId = deliveryIdOf(request.headers);
    try {
      const { event, notice } = await this.store.db.transaction().execute(async (trx) => {
        const queued = await this.events.queueForTurn(webhook, { type: WEBHOOK_EVENT, payload }, trx);
        if (deliveryId !== undefined) {
          const kept = await trx
            .insertInto('webhook_deliveries')
            .values({
              bot_id: webhook.botId,
              delivery_id: deliveryId,
              event_id: queued.event.id,
              created_at: nowIso(),
            })
            .onConflict((oc) => oc.columns(['bot_id', 'delivery_id']).doNothing())
            .executeTakeFirst();
          // Sent before: the event just queued goes with the transaction.
          if (kept.numInsertedOrUpdatedRows === 0n) throw new DuplicateDelivery();
        }
        return queued;
      });
      this.events.notifyQueued([notice]);
      return { eventId: event.id, duplicate: false };
    } catch (error) {
      if (!(error instanceof DuplicateDelivery) || deliveryId === undefined) throw error;
      const earlier = await this.store.db
        .selectFrom('webhook_deliveries')
        .select('event_id')
        .where('bot_id', '=', webhook.botId)
        .where('delivery_id', '=', deliveryId)
        .executeTakeFirstOrThrow();
      return { eventId: earlier.event_id, duplicate: true };
    }
  }

  /** Forgets the delivery names older than DELIVERY_MEMORY_MS. */
  async forgetDeliveries(now = Date.now()): Promise<number> {
    const result = await this.store.db
      .deleteFrom('webhook_deliveries')
      .where('created_at', '<', new Date(now - DELIVERY_MEMORY_MS).toISOString())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
