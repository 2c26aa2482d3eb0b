import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import { isInvalidRegex, isQueryTimeout } from '../../store/errors.ts';
import type { StoreSql } from '../../store/index.ts';
import { checkRegex, RegexSyntaxError } from '../../store/regex/syntax.ts';
import type { CheckedRegex } from '../../store/regex/syntax.ts';
import { ApiError } from '../shared/errors.ts';
import { sqlColumn } from './columns.ts';
import type { Column, ColumnType } from './columns.ts';
import { holdsNul, normalDate, storedValue } from './values.ts';
import type { SqlValue } from './values.ts';

/**
 * The filter language of `findTableRows` and `deleteTableRows`, compiled to one SQL condition with bound
 * parameters (docs/tables.md says what each operator means). Every condition built here is true or
 * false, never SQL's unknown, so `$not` and `$ne` treat nulls as the documented semantics say.
 */

export const invalidQuery = (message: string) => new ApiError('InvalidQuery', message);

/** What a statement with a compiled filter failed with, as the API answers it. */
export function filterFailure(err: unknown): unknown {
  if (isQueryTimeout(err)) {
    return invalidQuery('The query ran past the time limit: narrow its filter or simplify its $regex');
  }
  // Postgres refusing a pattern this syntax accepts ("too complex"): refused all the same.
  if (isInvalidRegex(err)) return invalidQuery(`filter: ${err instanceof Error ? err.message : String(err)}`);
  return err;
}

/** Most conditions one filter may hold (its SQL stays small). */
export const MAX_FILTER_CONDITIONS = 500;
/** Most operands of an `$in` or `$nin`. */
export const MAX_IN_OPERANDS = 1000;
/** Longest `$regex` pattern. */
export const MAX_REGEX_LENGTH = 1024;

/** What a filter, an order or a group can name: a column, a system column, or a path into an object column. */
export type Field =
  | { kind: 'column'; name: string; type: ColumnType | 'id'; sql: string }
  | { kind: 'path'; name: string; sql: string; path: string[] };

const SYSTEM_COLUMNS: Record<string, Field> = {
  id: { kind: 'column', name: 'id', type: 'id', sql: 'id' },
  createdAt: { kind: 'column', name: 'createdAt', type: 'date', sql: 'created_at' },
  updatedAt: { kind: 'column', name: 'updatedAt', type: 'date', sql: 'updated_at' },
};

/** The field a name designates in a table of `columns`, or an InvalidQuery naming `where`. */
export function resolveField(columns: Column[], name: string, where: string, paths = true): Field {
  const system = SYSTEM_COLUMNS[name];
  if (system) return system;
  const column = columns.find((c) => c.name === name);
  if (column) return { kind: 'column', name, type: column.type, sql: sqlColumn(column) };
  const [head = '', ...path] = name.split('.');
  const parent = columns.find((c) => c.name === head);
  if (paths && parent && parent.type === 'object' && path.length > 0 && path.every(validSegment)) {
    return { kind: 'path', name, sql: sqlColumn(parent), path };
  }
  if (parent && path.length > 0) {
    throw invalidQuery(`${where}: "${name}" reaches into column "${head}", which is no object column`);
  }
  throw invalidQuery(`${where}: the table has no column "${name}"`);
}

const validSegment = (segment: string) => segment.length > 0 && !/["\\]/.test(segment);

/** Every operator the filter language knows (docs/tables.md). */
export const FILTER_OPERATORS = [
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$mod',
  '$size',
  '$regex',
  '$options',
  '$not',
] as const;
type Operator = (typeof FILTER_OPERATORS)[number];
const isOperator = (key: string): key is Operator => (FILTER_OPERATORS as readonly string[]).includes(key);

const COMPARISONS = { $eq: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

type Condition = RawBuilder<SqlBool>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const TRUE = sql<SqlBool>`1 = 1`;
const FALSE = sql<SqlBool>`1 = 0`;

const and = (conditions: Condition[]): Condition =>
  conditions.length === 0
    ? TRUE
    : conditions.length === 1
      ? (conditions[0] ?? TRUE)
      : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;
const or = (conditions: Condition[]): Condition =>
  conditions.length === 0 ? FALSE : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`;
const not = (condition: Condition): Condition => sql<SqlBool>`(not ${condition})`;

/** Compiles filters for one table on one store. */
export class FilterCompiler {
  private conditions = 0;

  constructor(
    private readonly storeSql: StoreSql,
    private readonly columns: Column[],
  ) {}

  /** The condition of a whole filter (`filter` names it in errors). */
  compile(filter: unknown, where = 'filter'): Condition {
    if (!isPlainObject(filter)) throw invalidQuery(`${where} must be an object`);
    const parts: Condition[] = [];
    for (const [key, value] of Object.entries(filter)) {
      const at = `${where}.${key}`;
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(value) || value.length === 0)
          throw invalidQuery(`${at} must be a non-empty array of filters`);
        const children = value.map((child, i) => this.compile(child, `${at}[${i}]`));
        parts.push(key === '$and' ? and(children) : or(children));
      } else if (key === '$not') {
        parts.push(not(this.compile(value, at)));
      } else if (key.startsWith('$')) {
        throw invalidQuery(
          `${at}: unknown operator "${key}" (a filter level takes $and, $or, $not and column names)`,
        );
      } else {
        parts.push(this.field(resolveField(this.columns, key, at), value, at));
      }
    }
    return and(parts);
  }

  private field(field: Field, condition: unknown, at: string): Condition {
    if (!isPlainObject(condition)) {
      if (Array.isArray(condition))
        throw invalidQuery(`${at}: a value to compare must be a string, number, boolean or null`);
      return this.operator(field, '$eq', condition, at);
    }
    const keys = Object.keys(condition);
    if (keys.length === 0) throw invalidQuery(`${at} is an empty condition`);
    const parts: Condition[] = [];
    for (const key of keys) {
      if (!isOperator(key)) {
        throw invalidQuery(
          `${at}: unknown operator "${key}"${key.startsWith('$') ? '' : ` (operators start with "$": "$${key}"?)`}`,
        );
      }
      if (key === '$options') {
        if (condition.$regex === undefined) throw invalidQuery(`${at}: $options goes with $regex`);
        continue;
      }
      if (key === '$not') {
        if (!isPlainObject(condition.$not)) throw invalidQuery(`${at}.$not must be a condition object`);
        parts.push(not(this.field(field, condition.$not, `${at}.$not`)));
        continue;
      }
      parts.push(this.operator(field, key, condition[key], `${at}.${key}`, condition.$options));
    }
    return and(parts);
  }

  private count(at: string): void {
    if (++this.conditions > MAX_FILTER_CONDITIONS) {
      throw invalidQuery(`${at}: a filter holds at most ${MAX_FILTER_CONDITIONS} conditions`);
    }
  }

  private operator(
    field: Field,
    op: Exclude<Operator, '$options' | '$not'>,
    operand: unknown,
    at: string,
    options?: unknown,
  ): Condition {
    this.count(at);
    if (field.kind === 'path') return this.pathOperator(field, op, operand, at, options);
    const column = sql.ref(field.sql);
    const present = sql<SqlBool>`${column} is not null`;
    const absent = sql<SqlBool>`${column} is null`;
    switch (op) {
      case '$eq':
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (operand === null) {
          if (op === '$eq') return absent;
          throw invalidQuery(`${at}: null can only be compared with $eq and $ne`);
        }
        return sql<SqlBool>`(${present} and ${column} ${sql.raw(COMPARISONS[op])} ${this.operand(field, operand, at)})`;
      case '$ne':
        if (operand === null) return present;
        return sql<SqlBool>`(${absent} or ${column} <> ${this.operand(field, operand, at)})`;
      case '$in':
      case '$nin': {
        const list = this.list(operand, at);
        const values = list.filter((v) => v !== null).map((v, i) => this.operand(field, v, `${at}[${i}]`));
        const withNull = list.includes(null);
        const member = or([
          ...(values.length > 0 ? [sql<SqlBool>`(${present} and ${column} in (${sql.join(values)}))`] : []),
          ...(withNull ? [absent] : []),
        ]);
        return op === '$in' ? member : not(member);
      }
      case '$exists':
        if (typeof operand !== 'boolean') throw invalidQuery(`${at} must be true or false`);
        return operand ? present : absent;
      case '$regex':
        if (field.type !== 'string') throw invalidQuery(`${at}: $regex applies to text columns`);
        return sql<SqlBool>`(${present} and ${this.regex(column, operand, options, at)})`;
      case '$mod': {
        if (field.type !== 'number' && field.type !== 'id')
          throw invalidQuery(`${at}: $mod applies to number columns`);
        const [divisor, remainder] = this.mod(operand, at);
        return sql<SqlBool>`(${present} and ${this.storeSql.modulo(column, divisor)} = ${remainder})`;
      }
      case '$size': {
        if (field.type !== 'array') throw invalidQuery(`${at}: $size applies to array columns`);
        const size = this.size(operand, at);
        return sql<SqlBool>`(${present} and ${this.storeSql.jsonArrayLength(column, [])} = ${size})`;
      }
    }
  }

  /** An operand of a typed column, as stored. */
  private operand(
    field: Extract<Field, { kind: 'column' }>,
    value: unknown,
    at: string,
  ): RawBuilder<unknown> {
    if (field.type === 'object' || field.type === 'array') {
      throw invalidQuery(
        `${at}: "${field.name}" is an ${field.type} column; compare a path into it, or use $exists${field.type === 'array' ? ' or $size' : ''}`,
      );
    }
    if (field.type === 'id') {
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw invalidQuery(`${at}: "id" compares with numbers`);
      return this.storeSql.numberForInteger(value);
    }
    if (field.type === 'date') {
      const date = normalDate(value);
      if (date === undefined)
        throw invalidQuery(`${at}: "${field.name}" compares with date texts (ISO 8601)`);
      return sql.val(date);
    }
    const stored = storedValue(this.storeSql, field.type, value as never);
    if ('problem' in stored)
      throw invalidQuery(`${at}: "${field.name}" is a ${field.type} column; the value ${stored.problem}`);
    return sql.val(stored.value);
  }

  private pathOperator(
    field: Extract<Field, { kind: 'path' }>,
    op: Exclude<Operator, '$options' | '$not'>,
    operand: unknown,
    at: string,
    options: unknown,
  ): Condition {
    const json = new JsonPath(this.storeSql, field);
    switch (op) {
      case '$eq':
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        if (operand === null) {
          if (op === '$eq') return json.isNull();
          throw invalidQuery(`${at}: null can only be compared with $eq and $ne`);
        }
        return json.compare(COMPARISONS[op], scalarOperand(operand, at));
      }
      case '$ne':
        return not(operand === null ? json.isNull() : json.compare('=', scalarOperand(operand, at)));
      case '$in':
      case '$nin': {
        const list = this.list(operand, at);
        const member = or(
          list.map((v, i) =>
            v === null ? json.isNull() : json.compare('=', scalarOperand(v, `${at}[${i}]`)),
          ),
        );
        return op === '$in' ? member : not(member);
      }
      case '$exists':
        if (typeof operand !== 'boolean') throw invalidQuery(`${at} must be true or false`);
        return operand ? not(json.isNull()) : json.isNull();
      case '$regex':
        return json.typed('string', (value) => this.regex(value, operand, options, at));
      case '$mod': {
        const [divisor, remainder] = this.mod(operand, at);
        return json.typed(
          'number',
          (value) => sql<SqlBool>`${this.storeSql.modulo(value, divisor)} = ${remainder}`,
        );
      }
      case '$size': {
        const size = this.size(operand, at);
        return json.arrayLength(size);
      }
    }
  }

  private list(operand: unknown, at: string): unknown[] {
    if (!Array.isArray(operand) || operand.length === 0)
      throw invalidQuery(`${at} must be a non-empty array`);
    if (operand.length > MAX_IN_OPERANDS) throw invalidQuery(`${at} holds at most ${MAX_IN_OPERANDS} values`);
    return operand;
  }

  private mod(operand: unknown, at: string): [number, number] {
    if (
      !Array.isArray(operand) ||
      operand.length !== 2 ||
      !operand.every((n) => typeof n === 'number' && Number.isFinite(n))
    ) {
      throw invalidQuery(`${at} must be [divisor, remainder]`);
    }
    const [divisor, remainder] = operand as [number, number];
    // Whole numbers only: a tiny fractional divisor would overflow the division.
    if (!Number.isSafeInteger(divisor) || !Number.isSafeInteger(remainder) || divisor === 0) {
      throw invalidQuery(`${at}: the divisor and the remainder are whole numbers, and the divisor is not 0`);
    }
    return [divisor, remainder];
  }

  private size(operand: unknown, at: string): number {
    if (typeof operand !== 'number' || !Number.isInteger(operand) || operand < 0) {
      throw invalidQuery(`${at} must be a whole number ≥ 0`);
    }
    return operand;
  }

  private regex(value: RawBuilder<unknown>, pattern: unknown, options: unknown, at: string): Condition {
    if (typeof pattern !== 'string' || pattern.length > MAX_REGEX_LENGTH || holdsNul(pattern)) {
      throw invalidQuery(`${at} must be a pattern of at most ${MAX_REGEX_LENGTH} characters`);
    }
    if (options !== undefined && options !== 'i' && options !== 'c') {
      throw invalidQuery(`${at}: $options is "i" (ignore case) or "c" (match case)`);
    }
    return this.storeSql.regexMatch(value, checkedRegex(pattern, options === 'i', at));
  }
}

/** The pattern, checked; or an InvalidQuery naming `at` and saying what the syntax refuses. */
function checkedRegex(pattern: string, ignoreCase: boolean, at: string): CheckedRegex {
  try {
    return checkRegex(pattern, ignoreCase);
  } catch (err) {
    if (err instanceof RegexSyntaxError) throw invalidQuery(`${at}: ${err.message}`);
    throw err;
  }
}

type Scalar = string | number | boolean;

function scalarOperand(value: unknown, at: string): Scalar {
  if (typeof value === 'string' && holdsNul(value))
    throw invalidQuery(`${at}: a text may not hold a NUL character`);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw invalidQuery(
    `${at}: inside an object column a value to compare is a string, number, boolean or null`,
  );
}

/** A value inside an object column's JSON. */
class JsonPath {
  private readonly column: RawBuilder<unknown>;
  private readonly path: readonly string[];

  constructor(
    private readonly storeSql: StoreSql,
    field: Extract<Field, { kind: 'path' }>,
  ) {
    this.column = sql.ref(field.sql);
    this.path = field.path;
  }

  /** True when the value is of `type` and `condition` holds of it; never unknown. */
  typed(
    type: 'string' | 'number' | 'boolean',
    condition: (value: RawBuilder<unknown>) => Condition,
  ): Condition {
    const { storeSql, column, path } = this;
    // CASE evaluates the condition only on values of the type (a cast of another type would fail).
    return sql<SqlBool>`(case when ${storeSql.jsonIs(column, path, type)} then coalesce(${condition(storeSql.jsonValue(column, path, type))}, false) else false end)`;
  }

  compare(op: string, operand: Scalar): Condition {
    const type = typeof operand === 'string' ? 'string' : typeof operand === 'number' ? 'number' : 'boolean';
    const bound: SqlValue = typeof operand === 'boolean' ? this.storeSql.booleanValue(operand) : operand;
    return this.typed(type, (value) => sql<SqlBool>`${value} ${sql.raw(op)} ${bound}`);
  }

  /** Absent, JSON null, or the column itself null. */
  isNull(): Condition {
    return sql<SqlBool>`coalesce(${this.storeSql.jsonIs(this.column, this.path, 'null')}, true)`;
  }

  arrayLength(size: number): Condition {
    const { storeSql, column, path } = this;
    return sql<SqlBool>`(case when ${storeSql.jsonIs(column, path, 'array')} then ${storeSql.jsonArrayLength(column, path)} = ${size} else false end)`;
  }
}
