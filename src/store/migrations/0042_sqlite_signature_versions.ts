import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * SQLite: a version for each file's signatures of a model (`passage_signature_versions`), as PostgreSQL
 * has since 0036, which the server's copy of them in memory (vectors/signature-cache.ts) is checked
 * against at each search. Kept by triggers on each signature added or removed, in the transaction that
 * adds or removes it (a vector written; a passage, file or knowledge base deleted, by the cascades). A
 * file's version only grows: its row stays while the file does, at no signature too, so that signatures
 * removed and added again never meet a copy made at the same version. The file deleted takes it along.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`create table passage_signature_versions (
    file_id text not null references files (id) on delete cascade,
    model text not null,
    version integer not null,
    signatures integer not null,
    primary key (file_id, model)) without rowid`.execute(db);
  await sql`insert into passage_signature_versions (file_id, model, version, signatures)
    select file_id, model, 1, count(*) from passage_signatures group by file_id, model`.execute(db);
  await sql`create trigger passage_signature_added after insert on passage_signatures begin
    insert into passage_signature_versions (file_id, model, version, signatures)
      values (new.file_id, new.model, 1, 1)
      on conflict (file_id, model) do update set version = version + 1, signatures = signatures + 1;
    end`.execute(db);
  await sql`create trigger passage_signature_removed after delete on passage_signatures begin
    update passage_signature_versions set version = version + 1, signatures = signatures - 1
      where file_id = old.file_id and model = old.model;
    end`.execute(db);
}
