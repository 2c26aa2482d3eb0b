import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('chat_channels')
    .addColumn('bot_id', 'text', (c) => c.primaryKey().references('bots.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('encryption_key', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Ids chosen by Chat API clients, per bot, mapped to Parley's own.
  await db.schema
    .createTable('chat_ids')
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('foreign_id', 'text', (c) => c.notNull())
    .addColumn('internal_id', 'text', (c) => c.notNull().unique())
    .addPrimaryKeyConstraint('chat_ids_pk', ['bot_id', 'kind', 'foreign_id'])
    .execute();

  await db.schema
    .alterTable('conversations')
    .addColumn('signal_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('messages').addColumn('metadata', 'text').execute();

  // The live signals of each conversation, numbered without gaps: what listeners receive, and what a
  // reconnecting listener replays from its Last-Event-ID.
  await db.schema
    .createTable('conversation_signals')
    .addColumn('conversation_id', 'text', (c) =>
      c.notNull().references('conversations.id').onDelete('cascade'),
    )
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('frame', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('conversation_signals_pk', ['conversation_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('conversation_signals_created')
    .on('conversation_signals')
    .columns(['created_at'])
    .execute();

  // Every bot has a chat channel; bots made before this migration get theirs here.
  const now = new Date().toISOString();
  await sql`insert into chat_channels (bot_id, webhook_id, enabled, encryption_key, created_at, updated_at)
    select id, 'wh_' || id, 1, null, ${now}, ${now} from bots`.execute(db);
}
