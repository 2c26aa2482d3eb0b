import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Which runtime runs a bot's code: 'parley' for a Parley bot package; null when no code runs here.
  await db.schema.alterTable('bots').addColumn('runtime', 'text').execute();

  // The engine's claim on a pending event: who processes it, and until when (renewed while it runs).
  await db.schema.alterTable('events').addColumn('lease_owner', 'text').execute();
  await db.schema.alterTable('events').addColumn('lease_until', 'text').execute();
  await db.schema
    .createIndex('events_pending')
    .on('events')
    .columns(['status', 'created_at', 'id'])
    .execute();

  // Outputs of cacheable actions, by bot, action and input.
  await db.schema
    .createTable('action_cache')
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('output', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_cache_pk', ['bot_id', 'key'])
    .execute();
  await db.schema.createIndex('action_cache_expiry').on('action_cache').columns(['expires_at']).execute();
}
