import type { PackageRow } from './package-store.ts';
import { isPublished } from '../integrations/publishing.ts';
import { isJsonObject, toJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';

// How an interface's or a plugin's row reads as the record the Admin API answers, and what of a body
// is its definition.

/** What of a body is not the definition kept: the row's own columns, and who finds it. */
const NOT_DEFINITION = ['name', 'version', 'public', 'visibility', 'code'];

/** A body's definition: what it sends but its name, version, visibility and code. */
export function definitionPart(body: object): JsonObject {
  return Object.fromEntries(
    Object.entries(toJsonObject(body)).filter(([key]) => !NOT_DEFINITION.includes(key)),
  );
}

export const map = (value: JsonObject[string] | undefined): Record<string, JsonObject> =>
  isJsonObject(value)
    ? Object.fromEntries(Object.entries(value).filter((e): e is [string, JsonObject] => isJsonObject(e[1])))
    : {};
const strings = (value: JsonObject): Record<string, string> =>
  Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
export const text = (value: JsonObject[string] | undefined): string =>
  typeof value === 'string' ? value : '';

/** What a row's record shares whatever its kind. */
export function packageRecord(row: PackageRow, definition: JsonObject) {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    name: row.name,
    version: row.version,
    title: text(definition.title),
    description: text(definition.description),
    iconUrl: '',
    readmeUrl: '',
    public: isPublished(row.visibility),
    ...(isJsonObject(definition.attributes) && { attributes: strings(definition.attributes) }),
  };
}
