import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Executor } from '../store/index.ts';

export type Tags = Record<string, string>;
/** A tag update: a string sets the key, `null` deletes it. */
export type TagChanges = Record<string, string | null>;

export async function applyTagChanges(db: Executor, resourceId: string, changes: TagChanges): Promise<void> {
  for (const [key, value] of Object.entries(changes)) {
    await db.deleteFrom('tags').where('resource_id', '=', resourceId).where('key', '=', key).execute();
    if (value !== null) {
      await db.insertInto('tags').values({ resource_id: resourceId, key, value }).execute();
    }
  }
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
