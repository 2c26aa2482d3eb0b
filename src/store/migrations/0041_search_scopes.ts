import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Each search entry's scope (store/dialects/text-search.ts): a passage's file, a table row's table. A
 * search checks the entries that match its words against the scopes it may answer from on the row the
 * full-text index found, where it looked each one's passage up by id before (at 100,000 passages, half
 * of PostgreSQL's time in a search's full-text statement). Entries written before are given theirs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // SQLite adds a column that is not null only with a default; no entry keeps it.
  await sql`alter table search_entries add column scope text not null default ''`.execute(db);
  // A table row's entry id is `tr:<table id>:<row id>`; a passage's is the passage's id.
  const tableOf = postgres ? sql`split_part(id, ':', 2)` : sql`substr(id, 4, instr(substr(id, 4), ':') - 1)`;
  await sql`update search_entries set scope = ${tableOf} where id like 'tr:%'`.execute(db);
  await sql`update search_entries set scope = coalesce((
      select file_passages.file_id from file_passages where file_passages.id = search_entries.id), '')
    where id not like 'tr:%'`.execute(db);
  // An entry of a passage gone (none should be) has no scope: it goes, as it would have with its passage.
  if (!postgres) {
    await sql`delete from search_fts where rowid in (select rowid from search_entries where scope = '')`.execute(
      db,
    );
  }
  await sql`delete from search_entries where scope = ''`.execute(db);
  if (postgres) await sql`alter table search_entries alter column scope drop default`.execute(db);
}
