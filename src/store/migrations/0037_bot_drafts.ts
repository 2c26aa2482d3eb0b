import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A bot's draft, one per bot (domain/bots/bot-drafts.ts): the package source the console edits, kept
  // until it is discarded; `files` is the JSON of path → text, `layout` the JSON of where the author left
  // each node.
  await db.schema
    .createTable('bot_drafts')
    .addColumn('bot_id', 'text', (c) => c.primaryKey().references('bots.id').onDelete('cascade'))
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('layout', 'text', (c) => c.notNull())
    .addColumn('code_from', 'text', (c) => c.notNull())
    .addColumn('base_version_id', 'text')
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
