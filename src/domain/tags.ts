import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Executor } from '../store/index.ts';
import type { Page } from './pagination.ts';

export type Tags = Record<string, string>;
/** A tag update: a string sets the key; `null` or an empty string deletes it (as the hosted API documents). */
export type TagChanges = Record<string, string | null>;

export async function applyTagChanges(db: Executor, resourceId: string, changes: TagChanges): Promise<void> {
  for (const [key, value] of Object.entries(changes)) {
    await db.deleteFrom('tags').where('resource_id', '=', resourceId).where('key', '=', key).execute();
    if (value !== null && value !== '') {
      await db.insertInto('tags').values({ resource_id: resourceId, key, value }).execute();
    }
  }
}

/** Applies a tag update and answers the resource's tags after it. */
export async function updateTags(db: Executor, resourceId: string, changes: TagChanges): Promise<Tags> {
  await applyTagChanges(db, resourceId, changes);
  return (await loadTags(db, [resourceId])).get(resourceId) ?? {};
}

export async function deleteTags(db: Executor, resourceIds: string[]): Promise<void> {
  if (resourceIds.length === 0) return;
  await db.deleteFrom('tags').where('resource_id', 'in', resourceIds).execute();
}

export async function loadTags(db: Executor, resourceIds: string[]): Promise<Map<string, Tags>> {
  const byId = new Map<string, Tags>(resourceIds.map((id) => [id, {}]));
  if (resourceIds.length === 0) return byId;
  const rows = await db
    .selectFrom('tags')
    .select(['resource_id', 'key', 'value'])
    .where('resource_id', 'in', resourceIds)
    .execute();
  for (const row of rows) {
    const tags = byId.get(row.resource_id);
    if (tags) tags[row.key] = row.value;
  }
  return byId;
}

/** "The resource in `idColumn` carries every one of these tags." */
export function hasTags(idColumn: string, tags: Tags): RawBuilder<SqlBool>[] {
  return Object.entries(tags).map(
    ([key, value]) =>
      sql<SqlBool>`exists (select 1 from tags where tags.resource_id = ${sql.ref(idColumn)} and tags.key = ${key} and tags.value = ${value})`,
  );
}

/** The tags a get-or-create matches on: the named keys, or every tag given when none are named. */
export function discriminatingTags(tags: Tags, discriminateBy: string[] | undefined): Tags {
  if (!discriminateBy) return tags;
  return Object.fromEntries(discriminateBy.filter((k) => k in tags).map((k) => [k, tags[k] as string]));
}

type TaggedTable = 'users' | 'conversations' | 'messages' | 'workflows';

/** The oldest resource of a bot that carries all these tags. */
export async function findByTags(
  db: Executor,
  table: TaggedTable,
  botId: string,
  tags: Tags,
  extra: RawBuilder<SqlBool>[] = [],
): Promise<string | undefined> {
  const conditions = [...hasTags(`${table}.id`, tags), ...extra];
  const where = conditions.length ? sql.join(conditions, sql` and `) : sql`1 = 1`;
  const row = await sql<{
    id: string;
  }>`select ${sql.ref(`${table}.id`)} as id from ${sql.table(table)} where ${sql.ref(`${table}.bot_id`)} = ${botId} and ${where} order by ${sql.ref(`${table}.created_at`)}, ${sql.ref(`${table}.id`)} limit 1`.execute(
    db,
  );
  return row.rows[0]?.id;
}

export const TAGGED_TYPES = { user: 'users', conversation: 'conversations', message: 'messages' } as const;
export type TaggedType = keyof typeof TAGGED_TYPES;

/** The distinct values one tag key takes among a bot's users, conversations or messages, in order. */
export async function listTagValues(
  db: Executor,
  botId: string,
  key: string,
  type: TaggedType,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const table = TAGGED_TYPES[type];
  const rows = await sql<{ value: string }>`select distinct tags.value as value from tags
    join ${sql.table(table)} on ${sql.ref(`${table}.id`)} = tags.resource_id
    where ${sql.ref(`${table}.bot_id`)} = ${botId} and tags.key = ${key}
    ${after === undefined ? sql`` : sql`and tags.value > ${after}`}
    order by tags.value limit ${limit}`.execute(db);
  return rows.rows.map((r) => r.value);
}

/** A page of rows as resources: each row with its tags, loaded in one query. */
export async function withTags<Row extends { id: string }, Item>(
  db: Executor,
  page: Page<Row>,
  toItem: (row: Row, tags: Tags) => Item,
): Promise<Page<Item>> {
  const tags = await loadTags(
    db,
    page.items.map((r) => r.id),
  );
  return { ...page, items: page.items.map((r) => toItem(r, tags.get(r.id) ?? {})) };
}
