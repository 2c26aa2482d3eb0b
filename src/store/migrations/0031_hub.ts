import { sql } from 'kysely';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An integration is its workspace's until the server's operator publishes it to every workspace.
  await db.schema
    .alterTable('integrations')
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .execute();
  // The hub finds a published name and version once: two workspaces cannot both publish it.
  await db.schema
    .createIndex('integrations_published')
    .on('integrations')
    .columns(['name', 'version'])
    .unique()
    .where(sql.ref('visibility'), '<>', 'private')
    .execute();

  // Interfaces and plugins a workspace deployed (`bp deploy` of an interface or plugin project), one
  // row per kind, name and version: the definition as sent, and a plugin's bundles.
  await db.schema
    .createTable('packages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('packages_name_version', ['workspace_id', 'kind', 'name', 'version'])
    .execute();
  await db.schema
    .createIndex('packages_published')
    .on('packages')
    .columns(['kind', 'name', 'version'])
    .unique()
    .where(sql.ref('visibility'), '<>', 'private')
    .execute();
}
