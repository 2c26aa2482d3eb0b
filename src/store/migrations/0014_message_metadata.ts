import { sql } from 'kysely';
import type { Kysely } from 'kysely';

const PAGE = 1000;

export async function up(db: Kysely<unknown>): Promise<void> {
  // A chat message's metadata is part of what the bot sees: `payload.metadata`, as on the hosted
  // platform. It moves from its own column into the payload, where the chat's view reads it back.
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string; payload: string; metadata: string }>`
      select id, payload, metadata from messages
      where metadata is not null and id > ${after} order by id limit ${PAGE}`.execute(db);
    for (const row of rows) {
      const payload: unknown = JSON.parse(row.payload);
      const metadata: unknown = JSON.parse(row.metadata);
      const merged = { ...(typeof payload === 'object' && payload), metadata };
      await sql`update messages set payload = ${JSON.stringify(merged)} where id = ${row.id}`.execute(db);
    }
    const last = rows.at(-1);
    if (!last) break;
    after = last.id;
  }
  await db.schema.alterTable('messages').dropColumn('metadata').execute();
}
