import type { Store, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { keptErrorText } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { LeasedRows } from '../shared/leased-rows.ts';
import { nowIso } from '../shared/time.ts';
import { backoffMs, SEND_FOR_MS } from '../webhooks/sends.ts';

/** A bot's message to hand to the channel of its conversation's integration. */
export interface ClaimedChannelSend {
  id: string;
  botId: string;
  integrationId: string;
  /** The installation whose channel takes it; null for a send queued before installations had aliases. */
  alias: string | null;
  messageId: string;
  attempts: number;
  createdAt: string;
}

/** How handing a message to an integration went: taken, to be tried again, or refused for good. */
export type ChannelSendOutcome = 'delivered' | { retry: string } | { failed: string };

/**
 * Where the messages a bot writes in conversations of an integration go: the port the Runtime's
 * messages write to in their transaction (what runs integrations takes them from here).
 */
export interface ChannelOutbox {
  /** Queues the message for the installation of that alias if it is enabled; true if it did. */
  queue(trx: Executor, botId: string, alias: string, messageId: string): Promise<boolean>;
  /** After the commit of queued sends: what delivers them may look now. */
  queued(): void;
}

/**
 * The durable queue of bots' messages to integrations' channels (`message_created` to the
 * integration): written with the message, claimed with leases, tried again with a growing wait for a
 * day while the integration fails, given up at once when it refuses (a 4xx).
 */
export class ChannelSends implements ChannelOutbox {
  private readonly listeners = new Set<() => void>();
  private readonly rows: LeasedRows;

  constructor(private readonly store: Store) {
    this.rows = new LeasedRows(store, 'channel_sends');
  }

  async queue(trx: Executor, botId: string, alias: string, messageId: string): Promise<boolean> {
    const installation = await trx
      .selectFrom('bot_installations')
      .select('integration_id')
      .where('bot_id', '=', botId)
      .where('alias', '=', alias)
      .where('enabled', '=', 1)
      .executeTakeFirst();
    if (!installation) return false;
    const now = nowIso();
    await trx
      .insertInto('channel_sends')
      .values({
        id: newId('channelSend'),
        bot_id: botId,
        integration_id: installation.integration_id,
        alias,
        message_id: messageId,
        status: 'pending',
        attempts: 0,
        last_error: null,
        next_attempt_at: now,
        lease_owner: null,
        lease_until: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return true;
  }

  queued(): void {
    for (const listener of this.listeners) listener();
  }

  /** Calls `wake` when sends were queued; answers how to stop. */
  subscribe(wake: () => void): () => void {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  }

  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: ClaimedChannelSend[]; more: boolean }> {
    const { ids, more } = await this.rows.claim(owner, leaseMs, limit);
    if (ids.length === 0) return { items: [], more };
    const rows = await this.store.db
      .selectFrom('channel_sends')
      .selectAll()
      .where('id', 'in', ids)
      .orderBy('next_attempt_at')
      .execute();
    return { items: rows.map(toClaimed), more };
  }

  renew(owner: string, ids: string[], leaseMs: number): Promise<void> {
    return this.rows.renew(owner, ids, leaseMs);
  }

  releaseStaleClaims(): Promise<void> {
    return this.rows.releaseStaleClaims();
  }

  /** Records an attempt; conditional on the claim: an overtaken sender records nothing. */
  async record(
    owner: string,
    send: ClaimedChannelSend,
    outcome: ChannelSendOutcome,
    now = Date.now(),
  ): Promise<void> {
    const attempts = send.attempts + 1;
    const nextAttempt = now + backoffMs(attempts);
    const status =
      outcome === 'delivered'
        ? 'delivered'
        : 'failed' in outcome || nextAttempt - Date.parse(send.createdAt) > SEND_FOR_MS
          ? 'failed'
          : 'pending';
    const error = outcome === 'delivered' ? null : 'failed' in outcome ? outcome.failed : outcome.retry;
    await this.store.db
      .updateTable('channel_sends')
      .set({
        status,
        attempts,
        last_error: error === null ? null : keptErrorText(error),
        next_attempt_at: new Date(nextAttempt).toISOString(),
        lease_owner: null,
        lease_until: null,
        updated_at: new Date(now).toISOString(),
      })
      .where('id', '=', send.id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Removes the sends that ended (delivered or given up) before `before`. */
  pruneEnded(before: Date): Promise<void> {
    return this.rows.pruneEnded(before);
  }
}

function toClaimed(row: Row<'channel_sends'>): ClaimedChannelSend {
  return {
    id: row.id,
    botId: row.bot_id,
    integrationId: row.integration_id,
    alias: row.alias,
    messageId: row.message_id,
    attempts: row.attempts,
    createdAt: row.created_at,
  };
}
