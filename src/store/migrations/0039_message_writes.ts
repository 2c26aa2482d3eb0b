import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // PostgreSQL writes a message and its live signal in one statement with data-modifying CTEs; SQLite has
  // none, and wrote them in two. On SQLite a row inserted into this view is the message and, where it
  // carries a frame, its signal (numbered by the caller, dated as the message was updated): one statement.
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  // The table's columns as they are now: a migration that adds one to `messages` makes these again.
  const { rows } = await sql<{
    name: string;
  }>`select name from pragma_table_info('messages') order by cid`.execute(db);
  const columns = sql.join(rows.map((c) => sql.ref(c.name)));
  const values = sql.join(rows.map((c) => sql.ref(`new.${c.name}`)));
  await sql`create view message_writes as
    select ${columns}, cast(null as integer) as signal_seq, cast(null as text) as signal_frame
    from messages where 0`.execute(db);
  await sql`create trigger message_writes_insert instead of insert on message_writes
    begin
      insert into messages (${columns}) values (${values});
      insert into conversation_signals (conversation_id, seq, frame, created_at)
        select new.conversation_id, new.signal_seq, new.signal_frame, new.updated_at
        where new.signal_frame is not null;
    end`.execute(db);
}
