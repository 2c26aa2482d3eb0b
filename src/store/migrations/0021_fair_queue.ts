import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The engine shares its turns among workspaces (engine/leased-work.ts): it takes the oldest pending
  // events of each workspace in turn, and counts a workspace's pending events against its backlog quota.
  // Each event carries its bot's workspace, written by its insert, so that neither needs a join.
  await db.schema
    .alterTable('events')
    .addColumn('workspace_id', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`update events set workspace_id = (select b.workspace_id from bots b where b.id = events.bot_id)`.execute(
    db,
  );
  // Pending events by workspace, in queue order: the distinct workspaces that have any are found one
  // index seek each, and each workspace's oldest are read without walking the others'. It takes the place
  // of the index of all pending events in queue order, which only the claim of the oldest of them used:
  // a message's insert and its end write as many pending indexes as before.
  await db.schema
    .createIndex('events_pending_workspace')
    .on('events')
    .columns(['workspace_id', 'created_at', 'id'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema.dropIndex('events_pending_order').execute();
}
