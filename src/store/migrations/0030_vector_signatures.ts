import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';
import { fromBytes } from '../vectors/bytes.ts';
import { SIGNATURE_BITS, vectorSignature } from '../vectors/signature.ts';

/** Vectors read and given their signature at a time. */
const BATCH = 500;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  // Each vector's signature (vectors/signature.ts), what the vector indexes compare first; null for a
  // vector of no dimension (a row with nothing to embed), which no search ranks.
  for (const table of ['passage_vectors', 'row_vectors']) {
    await db.schema
      .alterTable(table)
      .addColumn('signature', postgres ? sql`bytea` : 'blob')
      .execute();
  }
  await signExisting(db, postgres, 'passage_vectors', { passage_id: 'text', model: 'text' });
  await signExisting(db, postgres, 'row_vectors', { table_id: 'text', row_id: 'integer', model: 'text' });
  await signatureTables(db, postgres);
}

/**
 * The signatures again, in narrow tables the searches scan (vectors/signature-scan.ts), one row per
 * vector with a signature: added by a trigger on the vector's insert (it needs no extension: SQLite's
 * store keeps them where sqlite-vec cannot load), removed with it by the foreign key's cascade. On
 * Postgres as bit strings (`bit_count(a # b)`), on SQLite as the bytes (sqlite-vec's `vec_bit`).
 */
async function signatureTables(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  const type = postgres ? sql.raw(`bit(${SIGNATURE_BITS})`) : sql.raw('blob');
  // The bytes in hex make the bit string, most significant bit of the first byte first.
  const bitsOf = (column: string) =>
    postgres ? sql.raw(`('x' || encode(${column}, 'hex'))::bit(${SIGNATURE_BITS})`) : sql.raw(column);
  // SQLite keeps a table's rows in the order of its key (WITHOUT ROWID): a file's signatures together, so
  // a search reads those of its files in ranges (18 ms at 100,000 where an index on the file took 120:
  // a lookup of the row for each). The foreign key's cascade finds them by (passage_id, model).
  await sql`create table passage_signatures (
    passage_id text not null, model text not null, file_id text not null, signature ${type} not null,
    ${postgres ? sql`primary key (passage_id, model)` : sql`primary key (file_id, model, passage_id)`},
    foreign key (passage_id, model) references passage_vectors (passage_id, model) on delete cascade)
    ${postgres ? sql`` : sql`without rowid`}`.execute(db);
  if (postgres)
    await sql`create index passage_signatures_file on passage_signatures (file_id, model)`.execute(db);
  else
    await sql`create unique index passage_signatures_passage on passage_signatures (passage_id, model)`.execute(
      db,
    );
  await sql`create table row_signatures (
    table_id text not null, row_id integer not null, model text not null, signature ${type} not null,
    primary key (table_id, model, row_id),
    foreign key (table_id, row_id, model) references row_vectors (table_id, row_id, model) on delete cascade)
    ${postgres ? sql`` : sql`without rowid`}`.execute(db);
  const passageInsert = sql`insert into passage_signatures (passage_id, model, file_id, signature)
    values (new.passage_id, new.model, new.file_id, ${bitsOf('new.signature')})`;
  const rowInsert = sql`insert into row_signatures (table_id, row_id, model, signature)
    values (new.table_id, new.row_id, new.model, ${bitsOf('new.signature')})`;
  for (const [name, table, insert] of [
    ['passage_signature_insert', 'passage_vectors', passageInsert],
    ['row_signature_insert', 'row_vectors', rowInsert],
  ] as const) {
    if (postgres) {
      await sql`create or replace function ${sql.raw(name)}() returns trigger language plpgsql as $$
        begin ${insert} on conflict do nothing; return null; end $$`.execute(db);
      await sql`create trigger ${sql.raw(name)} after insert on ${sql.raw(table)}
        for each row when (new.signature is not null) execute function ${sql.raw(name)}()`.execute(db);
    } else {
      await sql`create trigger ${sql.raw(name)} after insert on ${sql.raw(table)}
        when new.signature is not null begin ${insert} on conflict do nothing; end`.execute(db);
    }
  }
  await sql`insert into passage_signatures (passage_id, model, file_id, signature)
    select passage_id, model, file_id, ${bitsOf('signature')} from passage_vectors where signature is not null`.execute(
    db,
  );
  await sql`insert into row_signatures (table_id, row_id, model, signature)
    select table_id, row_id, model, ${bitsOf('signature')} from row_vectors where signature is not null`.execute(
    db,
  );
}

/**
 * Gives every vector of a dimension its signature, BATCH at a time in the order of the table's key (its
 * columns, with their Postgres types: a VALUES list's parameters have none of their own).
 */
async function signExisting(
  db: Kysely<unknown>,
  postgres: boolean,
  table: string,
  keyTypes: Record<string, string>,
): Promise<void> {
  const key = Object.keys(keyTypes);
  const keyColumns = sql.join(key.map((k) => sql.ref(k)));
  let after: unknown[] | undefined;
  for (;;) {
    const from = after ? sql`and (${keyColumns}) > (${sql.join(after)})` : sql``;
    const { rows } = await sql<Record<string, unknown> & { vector: Uint8Array }>`
      select ${keyColumns}, vector from ${sql.table(table)} where dimension > 0 ${from}
      order by ${keyColumns} limit ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    const signed = rows.map((row) => ({
      key: key.map((k) => row[k]),
      signature: vectorSignature(fromBytes(row.vector)),
    }));
    if (postgres) {
      const values = signed.map(
        (s) =>
          sql`(${sql.join(s.key.map((value, i) => sql`${value}::${sql.raw(keyTypes[key[i] as string] as string)}`))}, ${s.signature}::bytea)`,
      );
      const matched = sql.join(
        key.map((k) => sql`t.${sql.ref(k)} = u.${sql.ref(k)}`),
        sql` and `,
      );
      await sql`update ${sql.table(table)} t set signature = u.signature
        from (values ${sql.join(values)}) as u(${keyColumns}, signature) where ${matched}`.execute(db);
    } else {
      await db.transaction().execute(async (trx) => {
        for (const s of signed) {
          const matched = sql.join(
            key.map((k, i) => sql`${sql.ref(k)} = ${s.key[i]}`),
            sql` and `,
          );
          await sql`update ${sql.table(table)} set signature = ${s.signature} where ${matched}`.execute(trx);
        }
      });
    }
    const last = rows[rows.length - 1] as Record<string, unknown>;
    after = key.map((k) => last[k]);
  }
}
