import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What a visitor reads when the turn of their message fails for good (JSON `{ enabled, text? }`);
  // null, as every channel starts: on, with the default text.
  await db.schema.alterTable('chat_channels').addColumn('fallback_message', 'text').execute();
}
