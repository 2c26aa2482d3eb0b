import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  // A bot's files: the record, its tags (in `tags`), its content (a blob) and its passages.
  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    // `bot`, or `integration:<alias>`: a key is unique per owner within the bot.
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text')
    .addColumn('blob_id', 'text')
    .addColumn('upload_nonce', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('index_requested', 'integer', (c) => c.notNull())
    .addColumn('indexing_config', 'text')
    .addColumn('indexing_stack', 'text')
    .addColumn('access_policies', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('pending_passages', 'text')
    .addColumn('index_lease_owner', 'text')
    .addColumn('index_lease_until', 'text')
    .addColumn('index_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('files_owner_key', ['bot_id', 'owner', 'key'])
    .execute();
  for (const column of ['created_at', 'updated_at', 'key']) {
    await db.schema
      .createIndex(`files_bot_${column}`)
      .on('files')
      .columns(['bot_id', column, 'id'])
      .execute();
  }
  await db.schema.createIndex('files_status').on('files').columns(['status']).execute();
  await db.schema.createIndex('files_expiry').on('files').columns(['expires_at']).execute();

  // A file's passages, in document order.
  await db.schema
    .createTable('file_passages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('file_id', 'text', (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('page_number', 'integer')
    .addColumn('content', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('file_passages_order')
    .on('file_passages')
    .columns(['file_id', 'position'])
    .execute();

  await db.schema
    .createTable('knowledge_bases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_bases_bot_created')
    .on('knowledge_bases')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();

  // The ledger of stored contents: bytes are freed when their blob is `dead` (or a write never finished).
  // No foreign key to bots: a deleted bot's blobs must outlive its rows until the sweep frees their bytes.
  await db.schema
    .createTable('file_blobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('file_blobs_state').on('file_blobs').columns(['state', 'created_at']).execute();

  // Contents on Postgres, in chunks (every process sees them); the SQLite default keeps them in files.
  await db.schema
    .createTable('file_blob_chunks')
    .addColumn('blob_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', postgres ? sql`bytea` : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_blob_chunks_pk', ['blob_id', 'seq'])
    .execute();

  // The full-text index of the search engines (src/store/dialects/*/text-search.ts): entries by id,
  // English stemming.
  if (postgres) {
    await db.schema
      .createTable('search_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('document', sql`tsvector`, (c) => c.notNull())
      .execute();
    await sql`create index search_entries_document on search_entries using gin (document)`.execute(db);
  } else {
    await db.schema
      .createTable('search_entries')
      .addColumn('rowid', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .execute();
    await sql`create virtual table search_fts using fts5(
      text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2'
    )`.execute(db);
  }
}
