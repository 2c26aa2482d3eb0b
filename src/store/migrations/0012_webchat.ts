import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The origins a channel's Chat and webchat routes answer cross-origin requests from (a JSON array);
  // null: any origin (user keys are not cookies, so a page elsewhere gains nothing a script would not).
  await db.schema.alterTable('chat_channels').addColumn('allowed_origins', 'text').execute();
  // How the channel's webchat looks (a JSON object: bot name, avatar, colour...), for the embed
  // script and the share page.
  await db.schema
    .alterTable('chat_channels')
    .addColumn('webchat', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
}
