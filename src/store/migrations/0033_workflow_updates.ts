import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Whether the bot's code takes `workflow_update` events (domain/runtime/workflow-updates.ts), set at
  // each deploy; for bots deployed before, from their code as it is (`_` escaped: LIKE's wildcard).
  await db.schema
    .alterTable('bots')
    .addColumn('workflow_updates', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update bots set workflow_updates = 1
    where runtime = 'botpress-sdk'
      and (code like ${`%'workflow\\_update'%`} escape '\\' or code like ${`%"workflow\\_update"%`} escape '\\')`.execute(
    db,
  );
  // The workflows still running, by when they time out: what the store sweeper looks through.
  await db.schema
    .createIndex('workflows_active_timeout')
    .on('workflows')
    .column('timeout_at')
    .where(sql.ref('status'), 'in', [
      sql.lit('pending'),
      sql.lit('in_progress'),
      sql.lit('listening'),
      sql.lit('paused'),
    ])
    .execute();
}
