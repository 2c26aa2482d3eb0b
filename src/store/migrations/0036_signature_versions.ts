import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * PostgreSQL: a version for each file's signatures of a model (`passage_signature_versions`), which a
 * server's copy of them in memory (vectors/signature-cache.ts) is checked against at each search. Kept
 * by statement triggers in the transaction that adds or removes signatures (as
 * the signatures are by theirs: a vector written, a passage, file or knowledge base deleted), so that a
 * search never ranks a copy older than what its own statement sees. The versions are drawn from a
 * sequence, never reused: a file whose signatures are all removed, then added again, has a version no
 * copy was made at. A file deleted takes its versions with it (the foreign key). SQLite has none: its
 * scan of the signatures is fast enough in the database (sqlite-vec).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create sequence passage_signature_version`.execute(db);
  // With the number of signatures: what a copy would hold, known before it is read.
  await sql`create table passage_signature_versions (
    file_id text not null references files (id) on delete cascade,
    model text not null,
    version bigint not null,
    signatures integer not null,
    primary key (file_id, model))`.execute(db);
  // In the order of the key, as every writer takes their locks: two transactions that write signatures of
  // the same files wait for each other rather than deadlock.
  await sql`create function passage_signatures_added() returns trigger language plpgsql as $$
    begin
      insert into passage_signature_versions as v (file_id, model, version, signatures)
        select file_id, model, nextval('passage_signature_version'), n
        from (select file_id, model, count(*) as n from added where signature is not null
          group by file_id, model order by file_id, model) touched
        on conflict (file_id, model) do update
          set version = excluded.version, signatures = v.signatures + excluded.signatures;
      return null;
    end $$`.execute(db);
  // Removed: a new version, and none where the file's are all gone (no insert: the file itself may be
  // being deleted, its versions with it).
  await sql`create function passage_signatures_removed() returns trigger language plpgsql as $$
    begin
      update passage_signature_versions v
        set version = nextval('passage_signature_version'), signatures = v.signatures - touched.n
        from (select file_id, model, count(*) as n from removed group by file_id, model
          order by file_id, model) touched
        where v.file_id = touched.file_id and v.model = touched.model;
      delete from passage_signature_versions v using (select distinct file_id, model from removed) touched
        where v.file_id = touched.file_id and v.model = touched.model and v.signatures <= 0;
      return null;
    end $$`.execute(db);
  // Added on the vectors' insert, whose row trigger adds the signatures (0030): a statement of 200 vectors
  // is one new version, where a statement trigger on the signatures would fire for each. Removed on the
  // signatures' delete: a cascade of any size fires it once.
  await sql`create trigger passage_signatures_added after insert on passage_vectors
    referencing new table as added for each statement execute function passage_signatures_added()`.execute(
    db,
  );
  await sql`create trigger passage_signatures_removed after delete on passage_signatures
    referencing old table as removed for each statement execute function passage_signatures_removed()`.execute(
    db,
  );
  await sql`insert into passage_signature_versions (file_id, model, version, signatures)
    select file_id, model, nextval('passage_signature_version'), count(*)
    from passage_signatures group by file_id, model`.execute(db);
}
