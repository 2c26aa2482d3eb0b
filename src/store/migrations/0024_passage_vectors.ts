import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  // The embeddings of files' passages: one per passage and model, unit length, as little-endian float32
  // bytes (searched exactly, by the domain, over the passages a search may answer: no extension).
  // Removed with their passage (foreign key), in the transaction that drops it; `content_hash` is the
  // hash of the text embedded, by which a passage of the same text is given the vector again.
  await db.schema
    .createTable('passage_vectors')
    .addColumn('passage_id', 'text', (c) => c.notNull().references('file_passages.id').onDelete('cascade'))
    .addColumn('file_id', 'text', (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('dimension', 'integer', (c) => c.notNull())
    .addColumn('vector', postgres ? sql`bytea` : 'blob', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('passage_vectors_pk', ['passage_id', 'model'])
    .execute();
  await db.schema
    .createIndex('passage_vectors_file')
    .on('passage_vectors')
    .columns(['file_id', 'model'])
    .execute();
  await db.schema
    .createIndex('passage_vectors_content')
    .on('passage_vectors')
    .columns(['content_hash', 'model'])
    .execute();

  // The durable queue of embedding work: a file whose passages are to be embedded with `model`, claimed
  // with a lease, due again after a backoff when the provider failed, `failed` once given up.
  await db.schema
    .createTable('embedding_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey().references('files.id').onDelete('cascade'))
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
  await db.schema
    .createIndex('embedding_jobs_due')
    .on('embedding_jobs')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
}
