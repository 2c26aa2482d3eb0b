import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import { invalidPayload } from '../shared/errors.ts';
import { createAjv } from '../shared/json-schema.ts';
import { Text } from './schemas.ts';

/**
 * The tag filter of listFiles, searchFiles and listKnowledgeBases: tag -> condition, all ANDed.
 *   k: 'v'                  the tag equals v
 *   k: ['a', 'b']           equals any of them
 *   k: { in: 'a' | [...] }  the same
 *   k: { not: 'a' | [...] } has none of these values (a record without the tag has none)
 *   k: { exists: bool }     the tag is present, or absent
 * Query strings carry it dotted (`tags.k.not=a`), bracketed, or as a JSON string of the object.
 */
const Value = Text({ maxLength: 1000 });
const Values = Type.Union([Value, Type.Array(Value, { maxItems: 100 })]);
export const TagConditionSchema = Type.Union([
  Value,
  Type.Array(Value, { maxItems: 100 }),
  Type.Object(
    { in: Type.Optional(Values), not: Type.Optional(Values), exists: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
]);
const TagConditions = Type.Record(Text({ minLength: 1, maxLength: 200 }), TagConditionSchema, {
  maxProperties: 50,
});
export const TagFilterSchema = Type.Union([
  Type.String({ description: 'The object form as JSON' }),
  TagConditions,
]);
export type TagFilter = Static<typeof TagFilterSchema>;

const validateConditions = createAjv().compile(TagConditions);

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
