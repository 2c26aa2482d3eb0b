import type { ValidateFunction } from 'ajv';
import type { StoreSql } from '../../store/index.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import { createAjv } from '../shared/json-schema.ts';
import { ApiError } from '../shared/errors.ts';
import { sqlColumn } from './columns.ts';
import type { Column, ColumnType } from './columns.ts';

/** A value as bound to a SQL parameter. */
export type SqlValue = string | number | boolean | null;

/** The largest and smallest instants a date column holds: ISO text compares as time only within them. */
const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** A date text as stored (ISO 8601 UTC with milliseconds), or undefined if it is no date Parley keeps. */
export function normalDate(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time) || time < EARLIEST || time > LATEST) return undefined;
  return new Date(time).toISOString();
}

const TYPE_NAMES: Record<ColumnType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  date: 'a date (ISO 8601 text)',
  object: 'an object',
  array: 'an array',
};

/** Whether a JSON value holds a NUL character (in a text or a key): Postgres text and jsonb cannot. */
export function holdsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const at = stack.pop();
    if (typeof at === 'string') {
      if (at.includes('\u0000')) return true;
    } else if (typeof at === 'object' && at !== null) {
      for (const [key, child] of Object.entries(at)) {
        if (key.includes('\u0000')) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/** Why `value` does not fit a column of `type`, or the value as it is stored. */
export function storedValue(
  storeSql: StoreSql,
  type: ColumnType,
  value: Json,
): { value: SqlValue } | { problem: string } {
  const problem = { problem: `must be ${TYPE_NAMES[type]}` };
  if (holdsNul(value)) return { problem: 'may not hold a NUL character (\\u0000)' };
  switch (type) {
    case 'string':
      return typeof value === 'string' ? { value } : problem;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? { value } : problem;
    case 'boolean':
      if (typeof value !== 'boolean') return problem;
      return { value: storeSql.booleanValue(value) };
    case 'date': {
      const date = normalDate(value);
      return date === undefined ? problem : { value: date };
    }
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? { value: JSON.stringify(value) }
        : problem;
    case 'array':
      return Array.isArray(value) ? { value: JSON.stringify(value) } : problem;
  }
}

/** A stored value back as JSON. */
export function jsonValue(type: ColumnType, stored: unknown): Json {
  if (stored === null || stored === undefined) return null;
  switch (type) {
    case 'boolean':
      return stored === true || stored === 1;
    case 'object':
    case 'array':
      // JSON text, or the document itself where the driver parses it (Postgres's jsonb).
      return (typeof stored === 'string' ? JSON.parse(stored) : stored) as Json;
    default:
      return stored as Json;
  }
}

const ajv = createAjv();
const validators = new Map<string, ValidateFunction>();
/** Compiled column schemas kept: tables share few distinct ones. */
const VALIDATORS_KEPT = 500;

/** The keywords of a column's schema that constrain values (`enum`, `pattern`, `items`...), compiled once. */
function constraintsOf(column: Column): ValidateFunction | undefined {
  const { 'x-zui': _zui, description: _description, title: _title, ...constraints } = column.schema;
  if (Object.keys(constraints).length === 0) return undefined;
  const key = JSON.stringify(constraints);
  let validate = validators.get(key);
  if (!validate) {
    try {
      validate = ajv.compile(constraints);
    } catch (err) {
      throw new ApiError('InvalidJsonSchema', `Column "${column.name}": ${(err as Error).message}`);
    }
    if (validators.size >= VALIDATORS_KEPT) validators.clear();
    validators.set(key, validate);
  }
  return validate;
}

/** Checks that every column's schema compiles (at create and update), so rows never meet a broken one. */
export function checkConstraints(columns: Column[]): void {
  for (const column of columns) constraintsOf(column);
}

/** A row's column values, checked and converted for storage; `partial`: absent columns are left out. */
export interface WrittenRow {
  /** SQL column → value. */
  values: Map<string, SqlValue>;
  /** Keys that are no column (ignored). */
  unknown: string[];
}

/** The columns of `input` as stored, or the reason the row is refused. */
export function writtenRow(
  storeSql: StoreSql,
  columns: Column[],
  input: JsonObject,
  partial: boolean,
): WrittenRow | { problem: string } {
  const values = new Map<string, SqlValue>();
  for (const column of columns) {
    const given = input[column.name];
    if (given === undefined && partial) continue;
    if (given === undefined || given === null) {
      if (!column.nullable) return { problem: `column "${column.name}" may not be null` };
      values.set(sqlColumn(column), null);
      continue;
    }
    const stored = storedValue(storeSql, column.type, given);
    if ('problem' in stored) return { problem: `column "${column.name}" ${stored.problem}` };
    const validate = constraintsOf(column);
    if (validate && !validate(column.type === 'date' ? stored.value : given)) {
      const error = validate.errors?.[0];
      return {
        problem:
          `column "${column.name}" ${error?.instancePath ?? ''} ${error?.message ?? 'does not match its schema'}`.replace(
            /\s+/g,
            ' ',
          ),
      };
    }
    values.set(sqlColumn(column), stored.value);
  }
  const known = new Set(['id', ...columns.map((c) => c.name)]);
  return { values, unknown: Object.keys(input).filter((key) => !known.has(key)) };
}
