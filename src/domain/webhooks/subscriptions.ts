import type { Db, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { ApiError, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson } from '../shared/json.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { nowIso } from '../shared/time.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';
import { newSigningSecret } from './signatures.ts';
import { checkTarget } from './targets.ts';
import type { Event } from '../runtime/schemas.ts';
import type { WebhookSubscription, CreateWebhookSubscriptionBody } from './schemas.ts';

/** The most subscriptions one bot may have. */
export const MAX_SUBSCRIPTIONS_PER_BOT = 20;
/** The event type a subscription names to receive every event. */
export const EVERY_EVENT = '*';
/** How long a subscription list read by the fan-out is kept (another process's change shows within it). */
const CACHE_MS = 2000;

/** What the fan-out needs of a subscription. */
interface Subscriber {
  id: string;
  eventTypes: string[];
}

function toSubscription(row: Row<'webhook_subscriptions'>): WebhookSubscription {
  return {
    id: row.id,
    url: row.url,
    eventTypes: fromJson<string[]>(row.event_types),
    description: row.description,
    ...(row.last_status !== null &&
      row.last_attempt_at !== null && {
        lastDelivery: {
          status: row.last_status,
          ...(row.last_status_code !== null && { statusCode: row.last_status_code }),
          ...(row.last_error !== null && { error: row.last_error }),
          at: row.last_attempt_at,
        },
      }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The URLs a bot's events are posted to (outgoing webhooks), and the fan-out that queues a delivery
 * for each subscription an event matches, in the transaction that stores the event.
 */
export class WebhookSubscriptions {
  private readonly cache = new Map<string, { subscribers: Subscriber[]; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly allowPrivateTargets: boolean,
  ) {}

  async list(actor: WorkspaceActor, botId: string): Promise<WebhookSubscription[]> {
    await requireBotOfWorkspace(this.db, actor, botId);
    const rows = await this.db
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('bot_id', '=', botId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toSubscription);
  }

  /** The new subscription, and its secret: shown here only. */
  async create(
    actor: WorkspaceActor,
    botId: string,
    body: CreateWebhookSubscriptionBody,
  ): Promise<{ subscription: WebhookSubscription; secret: string }> {
    requireRole(actor.role, 'bots.write');
    await requireBotOfWorkspace(this.db, actor, botId);
    const url = checkTarget(body.url, 'url', {
      allowPrivate: this.allowPrivateTargets,
      instead: 'the deliveries are signed instead',
    }).href;
    const now = nowIso();
    const row: Row<'webhook_subscriptions'> = {
      id: newId('webhookSubscription'),
      bot_id: botId,
      url,
      event_types: JSON.stringify([...new Set(body.eventTypes)]),
      description: body.description ?? '',
      secret: newSigningSecret(),
      last_status: null,
      last_status_code: null,
      last_error: null,
      last_attempt_at: null,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      const { count } = await trx
        .selectFrom('webhook_subscriptions')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('bot_id', '=', botId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= MAX_SUBSCRIPTIONS_PER_BOT) {
        throw new ApiError(
          'LimitExceeded',
          `A bot has at most ${MAX_SUBSCRIPTIONS_PER_BOT} webhook subscriptions; delete one first`,
        );
      }
      await trx.insertInto('webhook_subscriptions').values(row).execute();
    });
    this.cache.delete(botId);
    return { subscription: toSubscription(row), secret: row.secret };
  }

  /** Deleting a subscription drops its deliveries not made yet. */
  async delete(actor: WorkspaceActor, botId: string, subscriptionId: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await requireBotOfWorkspace(this.db, actor, botId);
    const result = await this.db
      .deleteFrom('webhook_subscriptions')
      .where('id', '=', subscriptionId)
      .where('bot_id', '=', botId)
      .executeTakeFirst();
    if (result.numDeletedRows === 0n) throw notFound('Webhook subscription', subscriptionId);
    this.cache.delete(botId);
  }

  /** Whether `fanOut` would queue a delivery of an event of this type (its write then needs a transaction). */
  async wants(db: Executor, botId: string, type: string): Promise<boolean> {
    return (await this.wantedBy(db, botId, type)).length > 0;
  }

  /** Queues, in `db`'s transaction, a delivery of `event` to each subscription of the bot that wants it. */
  async fanOut(db: Executor, botId: string, event: Event): Promise<void> {
    const wanted = await this.wantedBy(db, botId, event.type);
    if (wanted.length === 0) return;
    const body = JSON.stringify({ type: event.type, botId, event });
    const now = nowIso();
    await db
      .insertInto('webhook_sends')
      .values(
        wanted.map((s) => ({
          id: newId('webhookSend'),
          subscription_id: s.id,
          body,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          lease_owner: null,
          lease_until: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }

  private async wantedBy(db: Executor, botId: string, type: string): Promise<Subscriber[]> {
    const subscribers = await this.subscribersOf(db, botId);
    return subscribers.filter((s) => s.eventTypes.includes(type) || s.eventTypes.includes(EVERY_EVENT));
  }

  /** Read in the caller's transaction: on SQLite, a read beside it would wait for its connection. */
  private async subscribersOf(db: Executor, botId: string): Promise<Subscriber[]> {
    const cached = this.cache.get(botId);
    if (cached && cached.until > Date.now()) return cached.subscribers;
    const rows = await db
      .selectFrom('webhook_subscriptions')
      .select(['id', 'event_types'])
      .where('bot_id', '=', botId)
      .execute();
    const subscribers = rows.map((r) => ({ id: r.id, eventTypes: fromJson<string[]>(r.event_types) }));
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(botId, { subscribers, until: Date.now() + CACHE_MS });
    return subscribers;
  }
}
