import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Executor, StoreSql } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import { fromJson } from './json.ts';
import type { Page } from './pagination.ts';

export type Tags = Record<string, string>;
/** A tag update: a string sets the key; `null` or an empty string deletes it (as the hosted API documents). */
export type TagChanges = Record<string, string | null>;

export async function applyTagChanges(db: Executor, resourceId: string, changes: TagChanges): Promise<void> {
  const entries = Object.entries(changes);
  if (entries.length === 0) return;
  await db
    .deleteFrom('tags')
    .where('resource_id', '=', resourceId)
    .where(
      'key',
      'in',
      entries.map(([key]) => key),
    )
    .execute();
  await insertTags(db, resourceId, changes);
}

/** The tags of a resource just inserted: nothing to replace, so only inserts (empty values are none). */
export async function insertTags(db: Executor, resourceId: string, tags: TagChanges): Promise<void> {
  const rows = Object.entries(tags).flatMap(([key, value]) =>
    value === null || value === '' ? [] : [{ resource_id: resourceId, key, value }],
  );
  if (rows.length > 0) await db.insertInto('tags').values(rows).execute();
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

/**
 * A column expression of the tags of the row `resourceId` names (say `r.id`), for a query that reads a
 * record with its tags in one statement: a JSON array of `[key, value]` pairs, read by `tagsFromPairs`.
 */
export function tagPairsColumn(storeSql: StoreSql, resourceId: RawBuilder<unknown>): RawBuilder<string> {
  const pair = storeSql.jsonArray([sql.ref('g.key'), sql.ref('g.value')]);
  return sql<string>`(select ${storeSql.jsonArrayAgg(pair)} from tags g where g.resource_id = ${resourceId})`;
}

export function tagsFromPairs(pairs: string): Tags {
  const tags: Tags = {};
  for (const [key, value] of fromJson<[string, string][]>(pairs)) tags[key] = value;
  return tags;
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

/**
 * "The resource in `idColumn` carries every one of these tags", as one condition whatever their
 * number: one indexed lookup of the (key, value) pairs, grouped by resource. (A condition per tag made
 * the query planner's work grow much faster than the number of tags.) Undefined when there are none.
 */
export function hasAllTags(idColumn: string, tags: Tags): RawBuilder<SqlBool> | undefined {
  const entries = Object.entries(tags);
  if (entries.length === 0) return undefined;
  const pairs = sql.join(entries.map(([key, value]) => sql`(${key}, ${value})`));
  return sql<SqlBool>`${sql.ref(idColumn)} in (select tags.resource_id from tags where (tags.key, tags.value) in (${pairs}) group by tags.resource_id having count(*) = ${entries.length})`;
}

/** The tags a get-or-create matches on: the named keys, or every tag given when none are named. */
export function discriminatingTags(tags: Tags, discriminateBy: string[] | undefined): Tags {
  if (!discriminateBy) return tags;
  const named = new Set(discriminateBy);
  return Object.fromEntries(Object.entries(tags).filter(([key]) => named.has(key)));
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

/**
 * Sets a tag only if the resource does not carry it yet: true when this call set it. One insert, so of
 * two concurrent claims exactly one wins (the key is the table's primary key with the resource).
 */
export async function claimTag(
  db: Executor,
  resourceId: string,
  key: string,
  value: string,
): Promise<boolean> {
  try {
    await db.insertInto('tags').values({ resource_id: resourceId, key, value }).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}
