import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Deleting a user deletes what it wrote and what happened to it: found by user, not by a scan.
  await db.schema.createIndex('messages_user').on('messages').columns(['user_id']).execute();
  await db.schema.createIndex('events_user').on('events').columns(['user_id']).execute();
}
