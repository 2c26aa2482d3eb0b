import type { Json, JsonObject } from './json.ts';

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `data` with the `default` of each property of `schema` it leaves out, through nested objects: what a
 * bot's code reads as its configuration, as the hosted platform fills it from the bot's configuration
 * schema (the SDK's `z.string().default(…)` becomes `default` in it). Only `properties` are followed:
 * what a value is, when the schema says it in other ways (`anyOf`, `$ref`), is left as given.
 */
export function withSchemaDefaults(schema: Json | undefined, data: JsonObject): JsonObject {
  if (!isObject(schema) || !isObject(schema.properties)) return data;
  const filled: JsonObject = { ...data };
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!isObject(property)) continue;
    const given = filled[name];
    if (given === undefined && property.default !== undefined)
      filled[name] = structuredClone(property.default);
    const value = filled[name];
    if (isObject(value)) filled[name] = withSchemaDefaults(property, value);
  }
  return filled;
}
