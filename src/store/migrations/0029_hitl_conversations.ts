import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A handoff an SDK bot opened through the built-in `hitl` integration has an agent-side conversation
  // of its own (the `hitl` channel's), where the agents' messages reach the bot; null for the others.
  await db.schema.alterTable('handoffs').addColumn('hitl_conversation_id', 'text').execute();
  // The handoff of a hitl conversation, found when the bot stops it (`stopHitl`).
  await db.schema
    .createIndex('handoffs_hitl_conversation')
    .on('handoffs')
    .column('hitl_conversation_id')
    .execute();
}
