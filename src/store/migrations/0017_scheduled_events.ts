import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The sweeper looks only for scheduled events that are due. Over every event, the index on
  // (status, scheduled_for) was written by each event's insert and by each change of its status (an
  // event of a chat message changes status twice): three writes of an index per message that only
  // ever served the scheduled ones. This one holds only those.
  await db.schema.dropIndex('events_due').execute();
  await db.schema
    .createIndex('events_due')
    .on('events')
    .column('scheduled_for')
    .where(sql.ref('status'), '=', sql.lit('scheduled'))
    .execute();
}
