import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The instant of the last event queued in the conversation: the next one is queued after it, stamped
  // while its statement holds the conversation's row, so a conversation's events are ordered as they
  // were stored even when the requests that stored them read their clocks in another order.
  await db.schema.alterTable('conversations').addColumn('last_event_at', 'text').execute();
}
