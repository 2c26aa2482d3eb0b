import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Every model call a bot made through the gateway (answered by the provider, or failed), for the
  // `llm` block of getBotAnalytics and the spend of a workspace. Answers from the cache are not calls.
  await db.schema
    .createTable('llm_calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'integer', (c) => c.notNull())
    .addColumn('output_tokens', 'integer', (c) => c.notNull())
    .addColumn('cost', 'double precision', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('llm_calls_bot').on('llm_calls').columns(['bot_id', 'created_at']).execute();
  // A workspace's cap on what its bots' model calls cost in a calendar month (UTC), in US dollars;
  // null: no cap (the hosted changeAispendQuota sets it).
  await db.schema.alterTable('workspaces').addColumn('ai_spend_limit', 'double precision').execute();
  await db.schema
    .createIndex('llm_calls_workspace')
    .on('llm_calls')
    .columns(['workspace_id', 'created_at'])
    .execute();
}
