import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  // The embeddings of table rows' searchable text: one per row and model, as passages' are (unit length,
  // little-endian float32 bytes; a row whose searchable columns are all empty has one of dimension 0, so
  // that it is not looked for again). Removed with their table (foreign key) and, by the domain, in the
  // transaction that deletes their rows or changes their searchable text.
  await db.schema
    .createTable('row_vectors')
    .addColumn('table_id', 'text', (c) => c.notNull().references('tables.id').onDelete('cascade'))
    .addColumn('row_id', 'integer', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('dimension', 'integer', (c) => c.notNull())
    .addColumn('vector', postgres ? sql`bytea` : 'blob', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('row_vectors_pk', ['table_id', 'row_id', 'model'])
    .execute();
  await db.schema
    .createIndex('row_vectors_content')
    .on('row_vectors')
    .columns(['content_hash', 'model'])
    .execute();

  // One queue of embedding work for files and tables: `kind` says which the id is, `bot_id` whose it is
  // (the calls are the bot's; its vectors of an older model go once none of its items is re-embedded).
  // Made again without the foreign key to files (an item of either kind is removed with its job by the
  // domain; a job whose item is gone finds nothing to do and ends).
  await db.schema
    .createTable('embedding_jobs_next')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('bot_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into embedding_jobs_next
      (id, kind, bot_id, model, status, attempts, last_error, next_attempt_at, lease_owner, lease_until,
       created_at, updated_at)
    select j.id, 'file', f.bot_id, j.model, j.status, j.attempts, j.last_error, j.next_attempt_at,
      j.lease_owner, j.lease_until, j.created_at, j.updated_at
    from embedding_jobs j join files f on f.id = j.id`.execute(db);
  await db.schema.dropTable('embedding_jobs').execute();
  await db.schema.alterTable('embedding_jobs_next').renameTo('embedding_jobs').execute();
  await db.schema
    .createIndex('embedding_jobs_due')
    .on('embedding_jobs')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('embedding_jobs_bot')
    .on('embedding_jobs')
    .columns(['bot_id', 'status'])
    .execute();
}
