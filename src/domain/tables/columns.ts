import { ApiError } from '../shared/errors.ts';
import type { JsonObject } from '../shared/json.ts';
import { MAX_COLUMNS, MAX_COLUMN_NAME } from './limits.ts';

/** What a column holds. A date is a JSON Schema string with `format: "date-time"`. */
export type ColumnType = 'string' | 'number' | 'boolean' | 'date' | 'object' | 'array';

/** A column as Parley keeps it: its schema as given, and what the storage needs to know. */
export interface Column {
  name: string;
  /** `x-zui.index`: the column's place, and its SQL column `c<position>`; never reused in a table. */
  position: number;
  type: ColumnType;
  nullable: boolean;
  /** The column's JSON Schema as given, without what the fields above say. */
  schema: JsonObject;
}

/** Fields every row has besides its columns: no column may take their names. */
export const SYSTEM_FIELDS = ['id', 'createdAt', 'updatedAt', 'computed', 'stale', 'similarity'] as const;

const SCALAR: readonly ColumnType[] = ['string', 'number', 'boolean', 'date'];
export const isScalar = (type: ColumnType) => SCALAR.includes(type);

/** The SQL column of a table column. */
export const sqlColumn = (column: Pick<Column, 'position'>) => `c${column.position}`;

const invalidSchema = (message: string) => new ApiError('InvalidJsonSchema', message);

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'];

/** Whether a value of a schema (or a schema patch) is a column's JSON Schema, not an example value. */
export function isColumnSchema(value: unknown): value is JsonObject {
  return isObject(value) && typeof value.type === 'string' && JSON_TYPES.includes(value.type);
}

export function checkColumnName(name: string): void {
  if (name.length === 0 || name.length > MAX_COLUMN_NAME) {
    throw invalidSchema(`Column name "${name}" must be 1 to ${MAX_COLUMN_NAME} characters`);
  }
  if ((SYSTEM_FIELDS as readonly string[]).includes(name)) {
    throw invalidSchema(`"${name}" is a system field of every row: choose another column name`);
  }
  if (name.includes('.') || name.startsWith('$')) {
    throw invalidSchema(`Column name "${name}" may not contain "." or start with "$"`);
  }
}

/**
 * A column from a JSON Schema fragment (`{ type: "number", ... }`) or, unless `schemaOnly`, from an
 * example value (`42`, `"text"`, `{ ... }`), whose type it takes.
 */
export function columnFrom(name: string, definition: unknown, position: number, schemaOnly = false): Column {
  checkColumnName(name);
  if (schemaOnly && !(isObject(definition) && typeof definition.type === 'string')) {
    throw invalidSchema(`Column "${name}" must be a JSON Schema object with a "type"`);
  }
  if (
    isObject(definition) &&
    typeof definition.type === 'string' &&
    (schemaOnly || isColumnSchema(definition))
  ) {
    const { type, format, nullable, 'x-zui': zui, ...rest } = definition;
    if (nullable !== undefined && typeof nullable !== 'boolean') {
      throw invalidSchema(`Column "${name}": "nullable" must be a boolean`);
    }
    if (zui !== undefined && !isObject(zui))
      throw invalidSchema(`Column "${name}": "x-zui" must be an object`);
    const schema: JsonObject = { ...rest };
    if (zui) {
      const { index: _index, ...ui } = zui;
      schema['x-zui'] = ui;
    }
    if (format !== undefined && format !== 'date-time') schema.format = format;
    return {
      name,
      position,
      type: type === 'string' && format === 'date-time' ? 'date' : typeOfSchema(type),
      nullable: nullable ?? true,
      schema,
    };
  }
  return { name, position, type: typeOfExample(name, definition), nullable: true, schema: {} };
}

/** The columns a schema (or a schema patch) gives: a JSON Schema's properties, or an example object's keys. */
export function schemaEntries(schema: unknown): { entries: Record<string, unknown>; schemaOnly: boolean } {
  if (!isObject(schema)) throw invalidSchema('The schema must be an object');
  if (
    schema.type === 'object' &&
    (schema.properties !== undefined || schema.additionalProperties !== undefined)
  ) {
    if (!isObject(schema.properties))
      throw invalidSchema('"properties" of the schema must be an object of columns');
    return { entries: schema.properties, schemaOnly: true };
  }
  return { entries: schema, schemaOnly: false };
}

function typeOfSchema(type: string): ColumnType {
  if (type === 'integer') return 'number';
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'object' || type === 'array') {
    return type;
  }
  throw invalidSchema(`Column type "${type}" is not one of string, number, boolean, object, array`);
}

function typeOfExample(name: string, example: unknown): ColumnType {
  if (typeof example === 'string') return 'string';
  if (typeof example === 'number') return 'number';
  if (typeof example === 'boolean') return 'boolean';
  if (Array.isArray(example)) return 'array';
  if (isObject(example)) return 'object';
  throw invalidSchema(
    `Column "${name}": give a JSON Schema ({ "type": ... }) or an example value (text, number, boolean, object or array)`,
  );
}

/** The columns of a table's schema as a create or get-or-create gives it: a JSON Schema or an example object. */
export function columnsFrom(schema: unknown): Column[] {
  const { entries, schemaOnly } = schemaEntries(schema);
  const required = isObject(schema) && Array.isArray(schema.required) ? schema.required : [];
  const columns = Object.entries(entries).map(([name, definition], position) => {
    const column = columnFrom(name, definition, position, schemaOnly);
    return required.includes(name) ? { ...column, nullable: false } : column;
  });
  checkColumnCount(columns.length);
  return columns;
}

export function checkColumnCount(count: number): void {
  if (count > MAX_COLUMNS) {
    throw new ApiError(
      'LimitExceeded',
      `A table has at most ${MAX_COLUMNS} columns; this schema has ${count}`,
    );
  }
}

/** A column's JSON Schema as the API answers it. */
export function columnSchema(column: Column): JsonObject {
  const zui = isObject(column.schema['x-zui']) ? column.schema['x-zui'] : {};
  return {
    ...column.schema,
    type: column.type === 'date' ? 'string' : column.type,
    ...(column.type === 'date' && { format: 'date-time' }),
    nullable: column.nullable,
    'x-zui': { ...zui, index: column.position },
  };
}

/** A table's schema as the API answers it. */
export function tableSchema(columns: Column[]): JsonObject {
  const required = columns.filter((c) => !c.nullable).map((c) => c.name);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: Object.fromEntries(columns.map((c) => [c.name, columnSchema(c)])),
    additionalProperties: true,
    ...(required.length > 0 && { required }),
  };
}

/** Whether a column is marked for `search`. */
export function isSearchable(column: Column): boolean {
  const zui = column.schema['x-zui'];
  return isObject(zui) && zui.searchable === true;
}
