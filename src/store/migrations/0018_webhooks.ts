import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** A signing secret written before this migration: base64url, as the Standard Webhooks format wants base64. */
function asStandardSecret(secret: string): string {
  return secret.startsWith('whsec_')
    ? secret
    : `whsec_${Buffer.from(secret, 'base64url').toString('base64')}`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each bot's webhook ingress: the id in `{base}/webhooks/{id}` and how its requests are verified.
  await db.schema
    .createTable('bot_webhooks')
    .addColumn('bot_id', 'text', (c) => c.primaryKey().references('bots.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
    .addColumn('verification', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // The deliveries a sender named (`webhook-id` and the like), so that one sent twice is queued once.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['bot_id', 'delivery_id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_age')
    .on('webhook_deliveries')
    .column('created_at')
    .execute();

  const now = new Date().toISOString();
  const bots = await sql<{ id: string; signing_secret: string }>`select id, signing_secret from bots`.execute(
    db,
  );
  for (const bot of bots.rows) {
    await sql`insert into bot_webhooks (bot_id, webhook_id, verification, created_at, updated_at)
      values (${bot.id}, ${randomUUID()}, 'standard-webhooks', ${now}, ${now})`.execute(db);
    // The bot's signing secret now signs and verifies webhooks in the Standard Webhooks format.
    await sql`update bots set signing_secret = ${asStandardSecret(bot.signing_secret)} where id = ${bot.id}`.execute(
      db,
    );
  }
}
