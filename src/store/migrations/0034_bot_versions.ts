import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { ulid } from 'ulidx';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Every deploy of a bot's code keeps what it deployed, immutable (domain/bots/bot-versions.ts):
  // `number` counts a bot's versions from 1, `tables` is the JSON of its tables' schemas then.
  await db.schema
    .createTable('bot_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references('bots.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('runtime', 'text')
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('tables', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('bot_versions_number', ['bot_id', 'number'])
    .execute();
  // The version the bot runs (null: no code, or none deployed since versions are kept).
  await db.schema.alterTable('bots').addColumn('version_id', 'text').execute();

  // A bot deployed before gets its code as it stands as version 1, so a later deploy can be rolled back
  // to it. Its id as domain/shared/ids.ts writes them (the prefix and a ULID), of the time it was deployed.
  const deployed = await sql<{
    id: string;
    code: string;
    runtime: string | null;
    definition: string;
    created_by: string | null;
    deployed_at: string | null;
    updated_at: string;
  }>`select id, code, runtime, definition, created_by, deployed_at, updated_at from bots
      where code is not null`.execute(db);
  for (const bot of deployed.rows) {
    const createdAt = bot.deployed_at ?? bot.updated_at;
    const id = `botver_${ulid(Date.parse(createdAt))}`;
    await sql`insert into bot_versions
        (id, bot_id, number, name, description, code, runtime, definition, tables, created_by, created_at)
      values (${id}, ${bot.id}, 1, 'v1', 'deployed before versions were kept', ${bot.code}, ${bot.runtime},
        ${bot.definition}, '{}', ${bot.created_by}, ${createdAt})`.execute(db);
    await sql`update bots set version_id = ${id} where id = ${bot.id}`.execute(db);
  }
}
