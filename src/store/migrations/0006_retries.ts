import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // How many times an event's turn failed for a reason that may pass (the store was unreachable...):
  // it is tried again, later each time, a bounded number of times.
  await db.schema
    .alterTable('events')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
