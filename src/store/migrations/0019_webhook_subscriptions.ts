import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // URLs a bot's events are posted to, each with the secret its deliveries are signed with and how
  // its last delivery went.
  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('last_status', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_subscriptions_bot')
    .on('webhook_subscriptions')
    .column('bot_id')
    .execute();

  // The durable queue of deliveries: written in the transaction that stores the event, so none is lost,
  // and sent (again, with a backoff) until the receiver takes it or a day has passed.
  await db.schema
    .createTable('webhook_sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) =>
      c.notNull().references('webhook_subscriptions.id').onDelete('cascade'),
    )
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_sends_due')
    .on('webhook_sends')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('webhook_sends_subscription')
    .on('webhook_sends')
    .column('subscription_id')
    .execute();
}
