import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A conversation a bot handed to a person (a human handoff), from its opening to its close.
  await db.schema
    .createTable('handoffs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text', (c) =>
      c.notNull().references('conversations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('team', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('agent_user_id', 'text')
    .addColumn('assigned_at', 'text')
    .addColumn('timeout_at', 'text')
    .addColumn('on_resolved', 'text')
    .addColumn('on_timeout', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('resolved_at', 'text')
    .addColumn('timed_out_at', 'text')
    .execute();
  // A bot's queue, newest first, by status or not.
  await db.schema
    .createIndex('handoffs_bot_created')
    .on('handoffs')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();
  // A workspace's queue (the console's inbox), by status, newest first.
  await db.schema
    .createIndex('handoffs_workspace_status_created')
    .on('handoffs')
    .columns(['workspace_id', 'status', 'created_at', 'id'])
    .execute();
  // The open handoff of a conversation (at most one), found at each of its messages' turns.
  await db.schema.createIndex('handoffs_conversation').on('handoffs').column('conversation_id').execute();
  // The sweep for handoffs no agent took in time.
  await db.schema
    .createIndex('handoffs_status_timeout')
    .on('handoffs')
    .columns(['status', 'timeout_at'])
    .execute();
  // What happened to each handoff, and who did it: every agent's action is recorded.
  await db.schema
    .createTable('handoff_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('handoff_id', 'text', (c) => c.notNull().references('handoffs.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text')
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('handoff_events_handoff')
    .on('handoff_events')
    .columns(['handoff_id', 'created_at', 'id'])
    .execute();
}
