import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A bot's tables: the definition. Each table's rows live in a SQL table of their own, named by
  // `storage` and created by the domain (src/domain/tables/storage.ts).
  await db.schema
    .createTable('tables')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // The columns, as Parley keeps them (src/domain/tables/columns.ts), JSON.
    .addColumn('columns', 'text', (c) => c.notNull())
    .addColumn('factor', 'integer', (c) => c.notNull())
    .addColumn('frozen', 'integer', (c) => c.notNull())
    .addColumn('key_column', 'text')
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('compute_enabled', 'integer', (c) => c.notNull())
    .addColumn('storage', 'text', (c) => c.notNull().unique())
    // How many of its columns are computed by code: the compute worker looks only at such tables.
    .addColumn('code_columns', 'integer', (c) => c.notNull().defaultTo(0))
    // The position the next new column gets: positions are never reused, so a SQL column keeps one meaning.
    .addColumn('next_position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('tables_bot_name', ['bot_id', 'name'])
    .execute();

  // Work on a table that runs off the request: exports, imports, copies, deletes by filter.
  await db.schema
    .createTable('table_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('table_id', 'text', (c) => c.notNull().references('tables.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('progress', 'real')
    .addColumn('input_file_id', 'text')
    .addColumn('output_file_id', 'text')
    // What the job needs besides its files (the export format, the filter of a delete...), JSON.
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('table_jobs_table')
    .on('table_jobs')
    .columns(['table_id', 'created_at'])
    .execute();
  await db.schema.createIndex('tables_code_columns').on('tables').columns(['code_columns']).execute();
  await db.schema.createIndex('table_jobs_status').on('table_jobs').columns(['status']).execute();
}
