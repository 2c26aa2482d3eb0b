import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A workspace's own OpenAI-compatible providers, beside the server's `default`: `<name>:<model>`
  // routes to them. The key is written here and never read back by any answer.
  await db.schema
    .createTable('llm_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('base_url', 'text', (c) => c.notNull())
    .addColumn('api_key', 'text')
    .addColumn('models', 'text', (c) => c.notNull())
    .addColumn('models_from', 'text', (c) => c.notNull())
    .addColumn('prices', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('llm_providers_workspace_name')
    .on('llm_providers')
    .columns(['workspace_id', 'name'])
    .unique()
    .execute();
  // The models a bot chose for `best` and `fast` (`<provider>:<model>`); null: the server's.
  await db.schema
    .createTable('bot_llm_models')
    .addColumn('bot_id', 'text', (c) => c.primaryKey().references('bots.id').onDelete('cascade'))
    .addColumn('best', 'text')
    .addColumn('fast', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
