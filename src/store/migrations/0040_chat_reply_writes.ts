import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';
import { writeView } from './0039_write_views.ts';

/**
 * A view written to, never read, whose insert trigger writes a bot's reply in a conversation of one
 * integration as PostgreSQL's `insertChatReply` does with CTEs, in one statement: the conversation's
 * count and signal number, the message and its live signal; nothing when the conversation is not the
 * bot's or belongs to another integration. On SQLite only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  const counted = sql`conversations where id = new.conversation_id and bot_id = new.bot_id
    and integration = new.integration`;
  await writeView(
    db,
    'chat_reply_writes',
    'messages',
    sql`cast(null as text) as integration, cast(null as text) as signal_frame`,
    (row) => sql`update conversations set message_count = message_count + 1,
        updated_at = new.updated_at, signal_seq = signal_seq + 1
        where id = new.conversation_id and bot_id = new.bot_id and integration = new.integration;
      insert into messages (${row.names}) select ${row.values} where exists (select 1 from ${counted});
      insert into conversation_signals (conversation_id, seq, frame, created_at)
        select new.conversation_id, signal_seq, new.signal_frame, new.updated_at from ${counted};`,
  );
}
