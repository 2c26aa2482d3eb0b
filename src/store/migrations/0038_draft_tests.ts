import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A bot's draft twin (domain/bots/draft-tests.ts): a bot of the same workspace, never listed nor
  // counted, that runs the draft so the console's test panel talks to it instead of to the bot. The bot's
  // delete deletes its twin; the twin's delete drops the link.
  await db.schema
    .createTable('bot_draft_twins')
    .addColumn('bot_id', 'text', (c) => c.primaryKey().references('bots.id').onDelete('cascade'))
    .addColumn('twin_id', 'text', (c) => c.notNull().unique().references('bots.id').onDelete('cascade'))
    .execute();
  // What each turn of a twin did: the nodes and cards it ran and the variables after it, which the
  // test panel shows beside the replies. Only twins' turns are recorded.
  await db.schema
    .createTable('draft_test_turns')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text')
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('draft_test_turns_conversation')
    .on('draft_test_turns')
    .columns(['bot_id', 'conversation_id', 'created_at'])
    .execute();
}
