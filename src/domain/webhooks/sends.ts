import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { keptErrorText } from '../shared/errors.ts';
import { LeasedRows } from '../shared/leased-rows.ts';

/** A delivery is tried again until this long after its event: then it is given up. */
export const SEND_FOR_MS = 24 * 60 * 60 * 1000;
/** The wait after the first failure; it doubles after each, up to MAX_BACKOFF_MS. */
export const FIRST_BACKOFF_MS = 5_000;
const MAX_BACKOFF_MS = 60 * 60 * 1000;

/** A claimed delivery, with where it goes and the secret that signs it. */
export interface ClaimedSend {
  id: string;
  subscriptionId: string;
  url: string;
  secret: string;
  body: string;
  attempts: number;
  createdAt: string;
}

/** How an attempt went: the receiver's status, or why there was none. */
export type SendOutcome = { statusCode: number } | { error: string };

export function backoffMs(attempts: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS);
}

const delivered = (outcome: SendOutcome): boolean =>
  'statusCode' in outcome && outcome.statusCode >= 200 && outcome.statusCode < 300;

/**
 * The durable queue of outgoing webhook deliveries (`webhook_sends`): due deliveries are claimed with
 * a lease, so one that a process died sending is sent again by another; each attempt's outcome is
 * recorded on the delivery and, as its last delivery, on the subscription.
 */
export class WebhookSends {
  private readonly rows: LeasedRows;

  constructor(private readonly store: Store) {
    this.rows = new LeasedRows(store, 'webhook_sends');
  }

  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: ClaimedSend[]; more: boolean }> {
    const { ids, more } = await this.rows.claim(owner, leaseMs, limit);
    if (ids.length === 0) return { items: [], more };
    const rows = await this.store.db
      .selectFrom('webhook_sends')
      .innerJoin('webhook_subscriptions', 'webhook_subscriptions.id', 'webhook_sends.subscription_id')
      .selectAll('webhook_sends')
      .select(['webhook_subscriptions.url', 'webhook_subscriptions.secret'])
      .where('webhook_sends.id', 'in', ids)
      .orderBy('webhook_sends.next_attempt_at')
      .execute();
    // A delivery of a subscription deleted meanwhile went with it.
    return { items: rows.map((row) => toClaimed(row, row)), more };
  }

  renew(owner: string, ids: string[], leaseMs: number): Promise<void> {
    return this.rows.renew(owner, ids, leaseMs);
  }

  releaseStaleClaims(): Promise<void> {
    return this.rows.releaseStaleClaims();
  }

  /**
   * Records an attempt of a claimed delivery: delivered on a 2xx, else due again after the backoff, or
   * failed for good a day after its event. Conditional on the claim: an overtaken sender records nothing.
   */
  async record(owner: string, send: ClaimedSend, outcome: SendOutcome, now = Date.now()): Promise<void> {
    const attempts = send.attempts + 1;
    const nextAttempt = now + backoffMs(attempts);
    const status = delivered(outcome)
      ? 'delivered'
      : nextAttempt - Date.parse(send.createdAt) > SEND_FOR_MS
        ? 'failed'
        : 'pending';
    const at = new Date(now).toISOString();
    const error = 'error' in outcome ? keptErrorText(outcome.error) : null;
    await this.store.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_sends')
        .set({
          status,
          attempts,
          next_attempt_at: new Date(nextAttempt).toISOString(),
          lease_owner: null,
          lease_until: null,
          updated_at: at,
          // What was taken need not be kept: the subscription's last delivery says how it went.
          ...(status !== 'pending' && { body: '' }),
        })
        .where('id', '=', send.id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return;
      await trx
        .updateTable('webhook_subscriptions')
        .set({
          last_status: status,
          last_status_code: 'statusCode' in outcome ? outcome.statusCode : null,
          last_error: error,
          last_attempt_at: at,
        })
        .where('id', '=', send.subscriptionId)
        .execute();
    });
  }

  /** Removes the deliveries that ended (delivered or given up) before `before`. */
  pruneEnded(before: Date): Promise<void> {
    return this.rows.pruneEnded(before);
  }
}

function toClaimed(row: Row<'webhook_sends'>, subscription: { url: string; secret: string }): ClaimedSend {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    url: subscription.url,
    secret: subscription.secret,
    body: row.body,
    attempts: row.attempts,
    createdAt: row.created_at,
  };
}
