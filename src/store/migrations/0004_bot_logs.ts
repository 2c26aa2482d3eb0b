import type { Kysely } from 'kysely';

/** The log lines of bots: what bot code prints and what the engine says about a bot, kept for getBotLogs. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bot_logs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('workflow_id', 'text')
    .execute();
  // Every read is one bot's lines in a time window, oldest first; pruning walks timestamps of all bots.
  await db.schema
    .createIndex('bot_logs_bot_timestamp')
    .on('bot_logs')
    .columns(['bot_id', 'timestamp', 'id'])
    .execute();
  await db.schema.createIndex('bot_logs_timestamp').on('bot_logs').columns(['timestamp']).execute();
}
