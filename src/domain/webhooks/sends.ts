import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { nowIso } from '../shared/time.ts';

/** A delivery is tried again until this long after its event: then it is given up. */
export const SEND_FOR_MS = 24 * 60 * 60 * 1000;
/** The wait after the first failure; it doubles after each, up to MAX_BACKOFF_MS. */
export const FIRST_BACKOFF_MS = 5_000;
const MAX_BACKOFF_MS = 60 * 60 * 1000;
/** The longest error text kept for a subscription's last delivery. */
const MAX_ERROR_LENGTH = 500;

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
  constructor(private readonly store: Store) {}

  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: ClaimedSend[]; more: boolean }> {
    const now = nowIso();
    const candidates = await this.store.db
      .selectFrom('webhook_sends')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit + 1)
      .execute();
    const until = new Date(Date.now() + leaseMs).toISOString();
    const items: ClaimedSend[] = [];
    for (const { id } of candidates.slice(0, limit)) {
      // Conditional on the claim being free: of several processes, one wins each delivery.
      const row = await this.store.db
        .updateTable('webhook_sends')
        .set({ lease_owner: owner, lease_until: until })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .returningAll()
        .executeTakeFirst();
      if (!row) continue;
      const subscription = await this.store.db
        .selectFrom('webhook_subscriptions')
        .select(['url', 'secret'])
        .where('id', '=', row.subscription_id)
        .executeTakeFirst();
      // Deleted meanwhile: its deliveries went with it.
      if (subscription) items.push(toClaimed(row, subscription));
    }
    return { items, more: candidates.length > limit };
  }

  async renew(owner: string, ids: string[], leaseMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.store.db
      .updateTable('webhook_sends')
      .set({ lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', ids)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** At start, on SQLite (one process per data folder): every claim was this process's earlier run's. */
  async releaseStaleClaims(): Promise<void> {
    if (this.store.dialect !== 'sqlite') return;
    await this.store.db
      .updateTable('webhook_sends')
      .set({ lease_owner: null, lease_until: null })
      .where('status', '=', 'pending')
      .where('lease_owner', 'is not', null)
      .execute();
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
    const error = 'error' in outcome ? outcome.error.slice(0, MAX_ERROR_LENGTH) : null;
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
  async pruneEnded(before: Date): Promise<void> {
    await this.store.db
      .deleteFrom('webhook_sends')
      .where('status', '!=', 'pending')
      .where('updated_at', '<', before.toISOString())
      .execute();
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
