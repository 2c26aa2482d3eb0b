import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Static } from 'typebox';
import { invalidPayload } from '../shared/errors.ts';
import { compiledOnFirstUse } from '../shared/json-schema.ts';
import { TagConditions } from './schemas.ts';
import type { TagFilter } from './schemas.ts';

const validateConditions = compiledOnFirstUse(TagConditions);

const asList = (v: string | string[]): string[] => (Array.isArray(v) ? v : [v]);

function hasTagWith(idColumn: string, key: string, values?: string[]): RawBuilder<SqlBool> {
  const valueCondition = values ? sql`and t.value in (${sql.join(values)})` : sql``;
  return sql<SqlBool>`exists (select 1 from tags t where t.resource_id = ${sql.ref(idColumn)} and t.key = ${key} ${valueCondition})`;
}

/** The conditions (parameterised SQL) a filter puts on the records whose id is in `idColumn`. */
export function tagFilterConditions(filter: TagFilter | undefined, idColumn: string): RawBuilder<SqlBool>[] {
  if (filter === undefined) return [];
  let conditions: unknown = filter;
  if (typeof filter === 'string') {
    try {
      conditions = JSON.parse(filter);
    } catch {
      throw invalidPayload('tags must be an object of tag conditions, or that object as JSON');
    }
  }
  if (!validateConditions(conditions)) {
    const error = validateConditions.errors?.[0];
    throw invalidPayload(
      `tags${error?.instancePath.replaceAll('/', '.') ?? ''} ${error?.message ?? 'is invalid'}`,
    );
  }
  const out: RawBuilder<SqlBool>[] = [];
  for (const [key, condition] of Object.entries(conditions as Static<typeof TagConditions>)) {
    if (typeof condition === 'string' || Array.isArray(condition)) {
      const values = asList(condition);
      if (values.length === 0) throw invalidPayload(`tags.${key} needs at least one value`);
      out.push(hasTagWith(idColumn, key, values));
      continue;
    }
    if (condition.in === undefined && condition.not === undefined && condition.exists === undefined) {
      throw invalidPayload(`tags.${key} needs one of in, not or exists`);
    }
    if (condition.in !== undefined) {
      const values = asList(condition.in);
      if (values.length === 0) throw invalidPayload(`tags.${key}.in needs at least one value`);
      out.push(hasTagWith(idColumn, key, values));
    }
    if (condition.not !== undefined && asList(condition.not).length > 0) {
      out.push(sql<SqlBool>`not ${hasTagWith(idColumn, key, asList(condition.not))}`);
    }
    if (condition.exists !== undefined) {
      const present = hasTagWith(idColumn, key);
      out.push(condition.exists ? present : sql<SqlBool>`not ${present}`);
    }
  }
  return out;
}
