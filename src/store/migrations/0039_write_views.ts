import { PostgresAdapter, sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';

/**
 * Views written to, never read, whose insert triggers write together in one statement what PostgreSQL
 * writes with data-modifying CTEs (SQLite has none, and took a statement for each): on SQLite only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  // A row is a message and, where it carries a frame, its live signal (numbered by the caller, dated as
  // the message was updated).
  await writeView(
    db,
    'message_writes',
    'messages',
    sql`cast(null as integer) as signal_seq, cast(null as text) as signal_frame`,
    (row) => sql`insert into messages (${row.names}) values (${row.values});
      insert into conversation_signals (conversation_id, seq, frame, created_at)
        select new.conversation_id, new.signal_seq, new.signal_frame, new.updated_at
        where new.signal_frame is not null;`,
  );
  // A row is a state a turn wrote last (stored as `States.write` stores it: a state already there takes
  // the payload, keeping its expiry) and, where it names one, the end of the turn's event (as
  // `EventQueue.finish` ends it).
  await writeView(
    db,
    'state_writes',
    'states',
    sql`cast(null as text) as ends_event, cast(null as text) as ends_status`,
    (row) => sql`insert into states (${row.names}) values (${row.values})
        on conflict (bot_id, type, resource_id, name)
        do update set payload = excluded.payload, updated_at = excluded.updated_at;
      update events set status = new.ends_status, failure_reason = null, lease_owner = null,
        lease_until = null, updated_at = new.updated_at
      where new.ends_event is not null and id = new.ends_event;`,
  );
}

/**
 * The view `name` of `table`'s columns as they are now and `extra` ones, and its insert trigger, which
 * runs `body` (given the columns and the inserted row's values of them). A migration that adds a column
 * to the table makes both again.
 */
export async function writeView(
  db: Kysely<unknown>,
  name: string,
  table: string,
  extra: RawBuilder<unknown>,
  body: (row: { names: RawBuilder<unknown>; values: RawBuilder<unknown> }) => RawBuilder<unknown>,
): Promise<void> {
  const { rows } = await sql<{
    name: string;
  }>`select name from pragma_table_info(${table}) order by cid`.execute(db);
  const names = sql.join(rows.map((c) => sql.ref(c.name)));
  const values = sql.join(rows.map((c) => sql.ref(`new.${c.name}`)));
  await sql`create view ${sql.id(name)} as select ${names}, ${extra} from ${sql.id(table)} where 0`.execute(
    db,
  );
  await sql`create trigger ${sql.id(`${name}_insert`)} instead of insert on ${sql.id(name)}
    begin ${body({ names, values })} end`.execute(db);
}
