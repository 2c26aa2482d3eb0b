import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A bot installs an integration under an alias (`x-multiple-integrations`: the key of `updateBot`'s
  // `integrations`), by default the integration's name, and may install one integration twice under
  // two aliases: the alias, not the integration, identifies an installation. SQLite cannot change a
  // primary key in place, so the table is made again, each installation under its integration's name.
  await db.schema
    .createTable('bot_installations')
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('alias', 'text', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id'))
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('configuration', 'text', (c) => c.notNull())
    // Which of the integration's configurations (`configurations.<type>`) it uses; null: the default one.
    .addColumn('configuration_type', 'text')
    // JSON: the integration's channels the bot does not use (the hosted API's `disabledChannels`).
    .addColumn('disabled_channels', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_installations_pk', ['bot_id', 'alias'])
    .execute();
  await sql`
    insert into bot_installations
      (bot_id, alias, integration_id, enabled, configuration, webhook_id, status, status_reason, created_at, updated_at)
    select b.bot_id, i.name, b.integration_id, b.enabled, b.configuration, b.webhook_id, b.status,
      b.status_reason, b.created_at, b.updated_at
    from bot_integrations b join integrations i on i.id = b.integration_id`.execute(db);
  await db.schema.dropTable('bot_integrations').execute();
  await db.schema
    .createIndex('bot_installations_integration')
    .on('bot_installations')
    .column('integration_id')
    .execute();

  // A message waiting for its conversation's channel goes to the installation of that alias.
  await db.schema.alterTable('channel_sends').addColumn('alias', 'text').execute();
  await sql`update channel_sends set alias = (select name from integrations where integrations.id = channel_sends.integration_id)`.execute(
    db,
  );

  // The key of an installation's process acts for the bot as that installation (its alias).
  await db.schema.alterTable('bot_api_keys').addColumn('integration_alias', 'text').execute();
}
