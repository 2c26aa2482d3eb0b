/** A JSON value: what the APIs take and answer, what the store keeps as text, what bot code sees. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A JSON value that is an object (not an array, not null). */
export function isJsonObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as JSON: the copy a JSON round trip makes (what crosses into bot code, or the store). */
export function toJsonValue(value: unknown): Json {
  return JSON.parse(JSON.stringify(value) ?? 'null') as Json;
}

/** An object as the JSON object a round trip makes of it; throws for a value that is not one. */
export function toJsonObject(value: object): JsonObject {
  const json = toJsonValue(value);
  if (!isJsonObject(json)) throw new Error('toJsonObject: the value is not a JSON object');
  return json;
}

/** JSON documents are stored as text on every store. */
export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

/** Applies a map update where `null` removes a key. */
export function mergeMap<T>(
  current: Record<string, T>,
  changes: Record<string, T | null> | undefined,
): Record<string, T> {
  if (!changes) return current;
  const next = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** A map without its `null` values (what a create does with a change map). */
export function withoutNulls<T>(map: Record<string, T | null> | undefined): Record<string, T> {
  return mergeMap({}, map);
}
