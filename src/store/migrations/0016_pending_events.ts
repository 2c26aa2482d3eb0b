import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The queue's claim asks, for each pending event, whether an older one of its conversation is still
  // pending. Over the index of all events that walked the conversation's whole history (every processed
  // event before it), so a claim grew slower with each message. These hold only what is pending.
  await db.schema
    .createIndex('events_pending_conversation')
    .on('events')
    .columns(['conversation_id', 'created_at', 'id'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('events_pending_order')
    .on('events')
    .columns(['created_at', 'id'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema.dropIndex('events_pending').execute();

  // How many times the engine claimed the event. A turn on its first claim can have sent nothing yet,
  // so it need not look for the replies an interrupted run of it would have sent.
  await db.schema
    .alterTable('events')
    .addColumn('deliveries', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
