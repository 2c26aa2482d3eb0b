import { Type } from 'typebox';
import type { Json, JsonObject as JsonObjectValue } from './json.ts';

/** Shared pieces of the resource schemas: each resource module composes these. */
/** The range of the store's integer columns (PostgreSQL `integer`). */
export const INT32 = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;
/** The longest duration a request may give, in milliseconds (a hundred years: later times stop being dates). */
export const MAX_DURATION_MS = 3_155_760_000_000;
/** A lifetime or delay in milliseconds. */
export const DurationMs = (description: string) =>
  Type.Number({ minimum: 0, maximum: MAX_DURATION_MS, description });
/** The longest time limit of bot code, in milliseconds (what a timer can count). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
/**
 * A JSON object. Its values are typed as JSON: whatever passes it was parsed from JSON (a body, the
 * arguments of bot code), so the type states what the validation guarantees.
 */
export const JsonObject = Type.Unsafe<JsonObjectValue>(Type.Record(Type.String(), Type.Unknown()));
export type JsonObject = JsonObjectValue;
/** Any JSON value (typed as JSON for the same reason as JsonObject). */
export const JsonValue = Type.Unsafe<Json>(Type.Unknown());
/** The most tags a record carries, and a filter names. */
export const MAX_TAGS = 100;
/** The longest tag key. */
export const MAX_TAG_KEY_LENGTH = 200;
const tagRules = {
  maxProperties: MAX_TAGS,
  propertyNames: { type: 'string', maxLength: MAX_TAG_KEY_LENGTH },
};
export const TagMap = Type.Record(Type.String(), Type.String(), tagRules);
/** A tag update: a string sets the key, `null` deletes it. */
export const TagChangeMap = Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), tagRules);
export const TagDefinitions = Type.Record(
  Type.String(),
  Type.Object({ title: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }),
);
export const Email = Type.String({ format: 'email', maxLength: 320 });

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);
/** A map of changes: a key set to null is removed. */
export const NullableMap = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Record(Type.String(), Nullable(t));
