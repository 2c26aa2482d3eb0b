import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Integrations a workspace deployed (`bp deploy` of an integration project): one row per name and
  // version, with the bundle that runs it and its definition (channels, actions, events, configuration).
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('secrets', 'text', (c) => c.notNull())
    .addColumn('signing_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('integrations_name_version', ['workspace_id', 'name', 'version'])
    .execute();

  // An integration installed on a bot, with the bot's configuration of it and the webhook its
  // requests come to.
  await db.schema
    .createTable('bot_integrations')
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id'))
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('configuration', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_integrations_pk', ['bot_id', 'integration_id'])
    .execute();
  await db.schema
    .createIndex('bot_integrations_integration')
    .on('bot_integrations')
    .column('integration_id')
    .execute();

  // The key an integration's process calls the Runtime API with acts for one bot as that integration.
  await db.schema.alterTable('bot_api_keys').addColumn('integration_id', 'text').execute();
  // The server process that made a key for a bundle's process: a server that died left its keys.
  await db.schema.alterTable('bot_api_keys').addColumn('process_owner', 'text').execute();

  // Messages of a bot to be handed to the channel of the integration its conversation belongs to:
  // written with the message, so none is lost, and sent again with a backoff until the integration
  // takes it.
  await db.schema
    .createTable('channel_sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('channel_sends_due')
    .on('channel_sends')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
}
