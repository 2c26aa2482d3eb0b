import { sql } from 'kysely';
import type { VectorIndex } from '../vector-index.ts';
import type { SqlBool } from 'kysely';
import type { InProcessSql, JsonKind, JsonPath, ValueKind } from '../store-sql.ts';
import { SqliteTextSearch } from './text-search.ts';

/** Column types: SQLite keeps JSON as text and booleans as 0 and 1; text compares by code point (BINARY). */
const COLUMN_TYPES: Record<ValueKind, string> = {
  text: 'text',
  number: 'real',
  integer: 'integer',
  boolean: 'integer',
  json: 'text',
};

/** The names `json_type` gives each kind of JSON value. */
const JSON_TYPE_NAMES: Record<JsonKind, string[]> = {
  string: ['text'],
  number: ['integer', 'real'],
  boolean: ['true', 'false'],
  array: ['array'],
  null: ['null'],
};

/** A path as SQLite's JSON functions take it: `$."a"."b"` (keys hold neither `"` nor `\`). */
const pathText = (path: JsonPath): string => `$${path.map((key) => `."${key}"`).join('')}`;

/** The row `alias` names as a JSON object of its `columns`. */
const rowObject = (alias: string, columns: readonly string[]) =>
  sql<string>`json_object(${sql.join(columns.map((c) => sql`${sql.lit(c)}, ${sql.ref(`${alias}.${c}`)}`))})`;

/** SQLite's SQL: the embedded store, in this process (`better-sqlite3`, store/sqlite-group-commit.ts). */
export function sqliteSql(vectorIndex: VectorIndex): InProcessSql {
  return {
    roundTrips: false,
    writesInWith: false,
    writeViews: true,
    // One server per data folder: the file is this process's alone.
    oneProcess: true,
    vectorIndex,
    textSearch: new SqliteTextSearch(),
    // Transactions run one at a time on the one connection: each already holds every key.
    lockKey: async () => undefined,
    heldRows: sql``,

    booleanValue: (value) => (value ? 1 : 0),
    // A column of integer affinity compares with any number.
    numberForInteger: (value) => sql.val(value),
    // Values keep their own type: none is read as text unasked.
    typed: (value) => value,

    contains: (text, needle) => sql<SqlBool>`instr(${text}, ${needle}) > 0`,
    modulo: (value, divisor) => sql`(${value} - ${divisor} * cast(${value} / ${divisor} as integer))`,
    instantAfter: (previous, now) =>
      sql<string>`max(${now}, coalesce(strftime('%Y-%m-%dT%H:%M:%fZ', ${previous}, '+0.001 seconds'), ${now}))`,
    millisecondsBetween: (from, to) => sql<number>`(julianday(${to}) - julianday(${from})) * 86400000.0`,
    // store/sqlite-functions.ts: RE2JS, each statement that calls it stopped past its time limit.
    regexMatch: (value, regex) =>
      sql<SqlBool>`parley_regexp(${value}, ${regex.pattern}, ${regex.ignoreCase ? 'i' : ''}) = 1`,

    jsonArray: (items) => sql<string>`json_array(${sql.join(items)})`,
    jsonArrayAgg: (value) => sql<string>`json_group_array(${value})`,
    jsonArrayAggDistinct: (value) => sql`json_group_array(distinct ${value})`,
    // A text whose value is JSON (a JSON column, the tags' pairs) stays a text: a subquery's column
    // carries no JSON subtype, so json_object embeds none of them as JSON.
    rowJson: (alias, columns) => rowObject(alias, columns),
    rowsJson: (alias, columns) => sql<string>`json_group_array(${rowObject(alias, columns)})`,
    jsonIs: (column, path, kind) =>
      sql<SqlBool>`json_type(${column}, ${pathText(path)}) in (${sql.join(JSON_TYPE_NAMES[kind])})`,
    // Booleans come out as 1 and 0, as `booleanValue` writes them.
    jsonValue: (column, path) => sql`json_extract(${column}, ${pathText(path)})`,
    jsonArrayLength: (column, path) =>
      path.length === 0
        ? sql<number>`json_array_length(${column})`
        : sql<number>`json_array_length(${column}, ${pathText(path)})`,

    columnType: (kind) => COLUMN_TYPES[kind],
    idColumn: sql`id integer primary key autoincrement`,
    everyColumnOf: () => sql`*`,
    tableNames: sql<{ name: string }>`select name from sqlite_master where type = 'table'`,
    // SQLite plans without gathered statistics: an index serves a filter whether ANALYZE ran or not.
    rowsWritten: () => undefined,
    // AUTOINCREMENT numbers after the largest id the table ever held.
    idsCopied: async () => undefined,
  };
}
