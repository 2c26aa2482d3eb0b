import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { InvalidQueryError, isApiError } from '@botpress/client';
import { createTestBot, rejectsWith, sleep } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import type { TestStore } from './helpers/stores.ts';

/**
 * The Tables filter language, cross-checked: fast-check writes filters (and orders and pages) over one
 * table of 150 rows, and `findTableRows` must answer the same rows on SQLite, on Postgres, and from the
 * plain evaluator below, which implements docs/tables.md and nothing else. A disagreement shrinks to a
 * small filter, shown as JSON with each store's answer.
 *
 * FILTER_RUNS=<n> and FILTER_SEED=<n> change how many filters are tried and which.
 */

const RUNS = Number(process.env.FILTER_RUNS ?? 200);
const SEED = Number(process.env.FILTER_SEED ?? 20260314);
const TABLE = 'FilterCheckTable';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Filter = Record<string, unknown>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------------
// The rows: deterministic (a seeded generator), with nulls and absent values, duplicates, case variants,
// negative and fractional numbers, dates written several ways, and object values of unexpected types.
// ---------------------------------------------------------------------------------------------------

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    qty: { type: 'number' },
    active: { type: 'boolean' },
    shippedAt: { type: 'string', format: 'date-time' },
    tags: { type: 'array', items: { type: 'string' } },
    customer: { type: 'object' },
  },
};

const NAMES = [
  'apple',
  'Apple',
  'APPLE',
  'apricot',
  'banana',
  'Banana',
  'band',
  'cherry',
  'Cherry',
  'date 1',
  'date 2',
  'kiwi9',
  'k1w1',
  'zed',
  'Zed',
  '_under',
  '~tilde',
  'a',
  '',
  'abc123',
  'b-9',
  'mango.7',
  // Beyond ASCII, for the code-point order: UTF-16 order puts '😀' (a surrogate pair) before '～' (U+FF5E).
  'é',
  '～',
  '😀',
  // Case beyond ASCII, for `$options: "i"` (Unicode simple case folding on both stores): É/é, ß/ẞ, the
  // long s ſ (folds with s), the Kelvin sign K (folds with k), Σ/σ/ς, and a newline for `.` and `\s`.
  'Éclair',
  'ÉCLAIR',
  'straße',
  'STRAẞE',
  'ſun',
  '\u212Aelvin',
  'ΣΟΦΟΣ',
  'σοφος',
  'line\nbreak',
];
const PRICES = [-10, -2.5, -0.5, 0, 0.25, 1, 1.99, 2, 2.5, 3, 7, 10, 19.99, 99.99, 100, 1_000_000];
const INSTANTS = [
  '1969-12-31T23:59:59.000Z',
  '1970-01-01T00:00:00.000Z',
  '1999-06-15T08:30:00.000Z',
  '2023-12-31T23:59:59.999Z',
  '2024-01-01T00:00:00.000Z',
  '2024-01-01T00:00:00.001Z',
  '2024-02-29T12:00:00.000Z',
  '2024-03-01T00:00:00.000Z',
  '2024-07-04T18:45:30.250Z',
  '2030-01-01T00:00:00.000Z',
].map((text) => Date.parse(text));
const TAGS = ['red', 'Red', 'green', 'blue', 'sale', 'new'];
const CITIES = ['Paris', 'paris', 'PARIS', 'Berlin', 'Boston', 'Bogota', 'Lyon', '12 Main', ''];

type DateStyle = 'ms' | 'plain' | '+02:00' | '-05:30' | 'day';
const DATE_STYLES: DateStyle[] = ['ms', 'plain', '+02:00', '-05:30', 'day'];

/** An instant as text `Date` parses, in one of several spellings (all the same instant). */
function formatDate(time: number, style: DateStyle): string {
  const iso = new Date(time).toISOString();
  switch (style) {
    case 'ms':
      return iso;
    case 'plain':
      return time % 1000 === 0 ? iso.replace('.000Z', 'Z') : iso;
    case 'day':
      return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
    default: {
      const sign = style.startsWith('-') ? -1 : 1;
      const minutes = sign * (Number(style.slice(1, 3)) * 60 + Number(style.slice(4, 6)));
      return `${new Date(time + minutes * 60_000).toISOString().slice(0, -1)}${style}`;
    }
  }
}

/** mulberry32: a small seeded generator, so the rows are the same on every run. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeRows(count: number): JsonObject[] {
  const random = generator(1234);
  const chance = (p: number) => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  /** Null values are absent half of the time. */
  const set = (row: JsonObject, key: string, value: Json) => {
    if (value !== null || chance(0.5)) row[key] = value;
  };
  const rows: JsonObject[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 10 && chance(0.06)) {
      rows.push(structuredClone(pick(rows)));
      continue;
    }
    const row: JsonObject = {};
    set(row, 'name', chance(0.1) ? null : pick(NAMES));
    set(row, 'price', chance(0.1) ? null : pick(PRICES));
    set(row, 'qty', chance(0.1) ? null : chance(0.15) ? int(-19, 41) / 2 : int(-9, 20));
    set(row, 'active', chance(0.15) ? null : chance(0.5));
    set(row, 'shippedAt', chance(0.12) ? null : formatDate(pick(INSTANTS), pick(DATE_STYLES)));
    set(row, 'tags', chance(0.15) ? null : Array.from({ length: int(0, 4) }, () => pick(TAGS)));
    const shape = random();
    if (shape < 0.12) set(row, 'customer', null);
    else if (shape < 0.18) set(row, 'customer', {});
    else {
      const customer: JsonObject = {};
      const age = random();
      if (age < 0.7) customer.age = int(0, 90);
      else if (age < 0.78) customer.age = pick(['12', '30', '45']);
      else if (age < 0.83) customer.age = null;
      else if (age < 0.87) customer.age = true;
      const city = random();
      if (city < 0.7) customer.city = pick(CITIES);
      else if (city < 0.78) customer.city = pick([42, 75001]);
      else if (city < 0.83) customer.city = null;
      const vip = random();
      if (vip < 0.6) customer.vip = chance(0.5);
      else if (vip < 0.68) customer.vip = pick(['true', 'false']);
      else if (vip < 0.72) customer.vip = 1;
      else if (vip < 0.77) customer.vip = null;
      const address = random();
      if (address < 0.2) customer.address = { zip: pick(['75001', '10115', 75001, null]) };
      else if (address < 0.25) customer.address = 'none';
      row.customer = customer;
    }
    rows.push(row);
  }
  return rows;
}

const ROWS = makeRows(150);
/** createTableRows calls, with pauses between them, so that createdAt takes several values. */
const BATCHES = [40, 35, 30, 25, 20];

// ---------------------------------------------------------------------------------------------------
// The evaluator: docs/tables.md, "Filters" and "Order", on rows held in memory.
// ---------------------------------------------------------------------------------------------------

interface StoredRow {
  id: number;
  createdAt: string;
  data: JsonObject;
}

type Kind = 'string' | 'number' | 'boolean' | 'date' | 'array' | 'object' | 'path';
const KINDS: Record<string, Kind> = {
  id: 'number',
  createdAt: 'date',
  name: 'string',
  price: 'number',
  qty: 'number',
  active: 'boolean',
  shippedAt: 'date',
  tags: 'array',
  customer: 'object',
};

function kindOf(field: string): Kind {
  const kind = KINDS[field];
  if (kind) return kind;
  if (field.startsWith('customer.')) return 'path';
  throw new Error(`the evaluator knows no field ${field}`);
}

/** A field's value in a row; absent is null. */
function valueAt(row: StoredRow, field: string): Json {
  if (field === 'id') return row.id;
  if (field === 'createdAt') return row.createdAt;
  const [head = '', ...path] = field.split('.');
  let value: Json | undefined = row.data[head];
  for (const segment of path) value = isObject(value) ? value[segment] : undefined;
  return value ?? null;
}

/** Strings compare by Unicode code point. */
function codePointCompare(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return Math.sign(x.length - y.length);
}

/**
 * How `a` compares with `b`, or undefined when they cannot be compared: a null, values of two JSON types
 * (inside an object column `"5"` is not `5`), objects or arrays. Dates compare as instants.
 */
function compare(kind: Kind, a: Json, b: Json): number | undefined {
  if (a === null || b === null || typeof a !== typeof b) return undefined;
  if (kind === 'date' && typeof a === 'string' && typeof b === 'string') {
    return Math.sign(Date.parse(a) - Date.parse(b));
  }
  if (typeof a === 'string' && typeof b === 'string') return codePointCompare(a, b);
  if (typeof a === 'number' && typeof b === 'number') return Math.sign(a - b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return undefined;
}

function holds(kind: Kind, value: Json, op: string, operand: unknown, options?: unknown): boolean {
  const c = () => compare(kind, value, operand as Json);
  switch (op) {
    case '$eq':
      return operand === null ? value === null : c() === 0;
    case '$ne':
      return !holds(kind, value, '$eq', operand);
    case '$gt':
      return (c() ?? 0) > 0;
    case '$gte': {
      const d = c();
      return d !== undefined && d >= 0;
    }
    case '$lt':
      return (c() ?? 0) < 0;
    case '$lte': {
      const d = c();
      return d !== undefined && d <= 0;
    }
    case '$in':
      return (operand as unknown[]).some((x) => holds(kind, value, '$eq', x));
    case '$nin':
      return !holds(kind, value, '$in', operand);
    case '$exists':
      return (value !== null) === operand;
    case '$regex':
      // RE2's syntax and meaning (docs/tables.md), as RE2JS reads them.
      return (
        typeof value === 'string' &&
        RE2JS.compile(operand as string, options === 'i' ? RE2JS.CASE_INSENSITIVE : 0).test(value)
      );
    case '$mod': {
      const [divisor, remainder] = operand as [number, number];
      return typeof value === 'number' && value - divisor * Math.trunc(value / divisor) === remainder;
    }
    case '$size':
      return Array.isArray(value) && value.length === operand;
    default:
      throw new Error(`the evaluator knows no operator ${op}`);
  }
}

function matches(row: StoredRow, filter: Filter): boolean {
  return Object.entries(filter).every(([key, condition]) => {
    if (key === '$and') return (condition as Filter[]).every((f) => matches(row, f));
    if (key === '$or') return (condition as Filter[]).some((f) => matches(row, f));
    if (key === '$not') return !matches(row, condition as Filter);
    const kind = kindOf(key);
    const value = valueAt(row, key);
    if (!isObject(condition)) return holds(kind, value, '$eq', condition);
    return Object.entries(condition).every(
      ([op, operand]) => op === '$options' || holds(kind, value, op, operand, condition.$options),
    );
  });
}

/** Ascending: nulls last; descending: nulls first; ties by id ascending. */
function ordered(rows: StoredRow[], orderBy: string, direction: 'asc' | 'desc'): StoredRow[] {
  const kind = kindOf(orderBy);
  return [...rows].sort((a, b) => {
    const va = valueAt(a, orderBy);
    const vb = valueAt(b, orderBy);
    let d = 0;
    if (va === null && vb !== null) d = direction === 'asc' ? 1 : -1;
    else if (va !== null && vb === null) d = direction === 'asc' ? -1 : 1;
    else d = (compare(kind, va, vb) ?? 0) * (direction === 'asc' ? 1 : -1);
    return d !== 0 ? d : a.id - b.id;
  });
}

// ---------------------------------------------------------------------------------------------------
// Filters: operands of each field's type, mostly values the rows hold.
// ---------------------------------------------------------------------------------------------------

/** createdAt differs between stores: a filter names "row k's createdAt", made concrete per store. */
const CREATED_TOKEN = /^createdAt of #(\d+) ([+-]\d+)ms (Z|\+02:00)$/;

function resolveTokens(value: unknown, rows: StoredRow[]): unknown {
  if (typeof value === 'string') {
    const m = CREATED_TOKEN.exec(value);
    if (!m) return value;
    const row = rows.find((r) => r.id === Number(m[1]));
    assert.ok(row, `row #${m[1]} exists`);
    const time = Date.parse(row.createdAt) + Number(m[2]);
    return formatDate(time, m[3] === 'Z' ? 'ms' : '+02:00');
  }
  if (Array.isArray(value)) return value.map((v) => resolveTokens(v, rows));
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveTokens(v, rows)]));
  }
  return value;
}

const mentionsCreatedAt = (filter: unknown) => JSON.stringify(filter ?? null).includes('createdAt');

type Entries = [string, unknown][];
type OpArbitrary = fc.Arbitrary<Entries>;

/** Distinct non-null scalar values at `field` in the rows. */
function present(field: string): Json[] {
  const rows = ROWS.map((data, i) => ({ id: i + 1, createdAt: '', data }));
  const seen = new Map<string, Json>();
  for (const row of rows) {
    const value = valueAt(row, field);
    if (value !== null && !isObject(value) && !Array.isArray(value)) seen.set(JSON.stringify(value), value);
  }
  return [...seen.values()];
}

const weighted = <T>(...items: [number, fc.Arbitrary<T>][]) =>
  fc.oneof(...items.map(([weight, arbitrary]) => ({ weight, arbitrary })));

const numberOperand = (values: Json[]) =>
  weighted<number>(
    [4, fc.constantFrom(...(values as number[]))],
    [1, fc.integer({ min: -20, max: 160 })],
    [1, fc.integer({ min: -40, max: 240 }).map((n) => n / 2)],
  );

const stringOperand = (values: Json[]) =>
  weighted<string>(
    [4, fc.constantFrom(...(values as string[]))],
    [2, fc.constantFrom('a', 'ap', 'A', 'B', 'ban', 'c', 'z', 'Z', '_', '~', '0', 'date', ' ')],
    [1, fc.string({ unit: 'grapheme-ascii', maxLength: 4 })],
  );

const dateOperand = fc
  .tuple(
    fc.constantFrom(...INSTANTS),
    fc.constantFrom(0, 0, 0, -1, 1, -86_400_000),
    fc.constantFrom(...DATE_STYLES),
  )
  .map(([time, shift, style]) => formatDate(time + shift, style));

const createdOperand = fc
  .tuple(
    fc.integer({ min: 1, max: ROWS.length }),
    fc.constantFrom(0, 0, -1, 1),
    fc.constantFrom('Z', '+02:00'),
  )
  .map(([id, shift, zone]) => `createdAt of #${id} ${shift < 0 ? '-' : '+'}${Math.abs(shift)}ms ${zone}`);

/** Inside an object column: any scalar type, those the rows hold first. */
const pathOperand = (values: Json[]) =>
  weighted<Json>(
    [5, fc.constantFrom(...values)],
    [1, fc.integer({ min: -5, max: 100 })],
    [1, fc.constantFrom('12', '30', 'Paris', 'true', '75001', '')],
    [1, fc.boolean()],
  );

const single = (op: string, operand: fc.Arbitrary<unknown>): OpArbitrary =>
  operand.map((value): Entries => [[op, value]]);

/** $eq $ne $gt $gte $lt $lte $in $nin $exists with operands of one type ($eq/$ne null now and then). */
function comparisons(operand: fc.Arbitrary<unknown>): OpArbitrary[] {
  const orNull = weighted<unknown>([6, operand], [1, fc.constant(null)]);
  return [
    single('$eq', orNull),
    single('$ne', orNull),
    single('$gt', operand),
    single('$gte', operand),
    single('$lt', operand),
    single('$lte', operand),
    single('$in', fc.array(operand, { minLength: 1, maxLength: 4 })),
    single('$nin', fc.array(operand, { minLength: 1, maxLength: 4 })),
    single('$exists', fc.boolean()),
  ];
}

/**
 * Patterns of the accepted syntax (docs/tables.md): literals, beyond ASCII too and with case to fold,
 * escapes, Perl, POSIX and bracket classes, anchors and word boundaries, groups, alternatives, and every
 * kind of quantifier.
 */
const REGEX_ATOMS = [
  ...['a', 'A', 'b', 'B', 'c', 'e', 'n', 'p', 'r', 's', 'S', 'z', 'Z', '1', '9', ' ', '-', '_', '\\.'],
  ...['é', 'É', 'ß', 'ẞ', 'k', 'K', '\u212A', 'ſ', 'σ', 'Σ', 'ς', '😀', '～', '\\x{E9}', '\\n', '\\-'],
];
const REGEX_CLASSES = [
  ...['.', '[a-c]', '[A-Z]', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '[0-9]', '[^a]', '[xyz]'],
  ...['[[:alpha:]]', '[[:^lower:]]', '[[:punct:][:space:]]', '[\\w-]', '[^\\d\\s]', '[é-ü]', '[^k]', '[]a]'],
];
const REGEX_ANCHORS = ['^', '$', '\\b', '\\B', '\\A', '\\z'];
const REGEX_QUANTIFIERS = ['', '', '', '*', '+', '?', '{2}', '{1,2}', '{0,}', '*?', '+?'];

const regexPiece: fc.Arbitrary<string> = weighted<string>(
  [
    6,
    fc
      .tuple(fc.constantFrom(...REGEX_ATOMS, ...REGEX_CLASSES), fc.constantFrom(...REGEX_QUANTIFIERS))
      .map(([atom, quantifier]) => atom + quantifier),
  ],
  [1, fc.constantFrom(...REGEX_ANCHORS)],
  [
    1,
    fc
      .tuple(
        fc.constantFrom('(?:', '('),
        fc.array(fc.constantFrom(...REGEX_ATOMS, ...REGEX_CLASSES, 'an', 'ap', 'ra'), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.constantFrom('', '*', '+', '?', '{1,2}'),
      )
      .map(([open, options, quantifier]) => `${open}${options.join('|')})${quantifier}`),
  ],
);

const regexPattern = (values: string[]) =>
  weighted<string>(
    [4, fc.array(regexPiece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''))],
    [
      1,
      fc
        .tuple(fc.array(regexPiece, { minLength: 1, maxLength: 2 }), fc.array(regexPiece, { maxLength: 2 }))
        .map(([left, right]) => `${left.join('')}|${right.join('')}`),
    ],
    [
      2,
      fc
        .tuple(fc.constantFrom(...values), fc.integer({ min: 1, max: 4 }), fc.boolean())
        .map(
          ([value, length, anchor]) =>
            `${anchor ? '^' : ''}${RE2JS.quote([...value].slice(0, length).join(''))}`,
        ),
    ],
  );

const regex = (values: string[]): OpArbitrary =>
  fc
    .tuple(regexPattern(values), fc.constantFrom(undefined, undefined, 'i', 'i', 'c'))
    .map(([pattern, options]): Entries =>
      options
        ? [
            ['$regex', pattern],
            ['$options', options],
          ]
        : [['$regex', pattern]],
    );

const mod: OpArbitrary = fc
  .tuple(
    // Whole numbers only (docs/tables.md): a fractional divisor or remainder is InvalidQuery.
    fc.constantFrom(1, 2, 3, 4, 5, 7, 10, -2, -3),
    fc.constantFrom(0, 0, 1, 1, 2, 3, -1, -2),
  )
  .map(([divisor, remainder]): Entries => [['$mod', [divisor, remainder]]]);

interface FieldSpec {
  field: string;
  weight: number;
  /** A bare value (`{ field: value }`), where the field takes one. */
  bare?: fc.Arbitrary<unknown>;
  ops: OpArbitrary[];
}

const STRINGS_AT = (field: string) => present(field).filter((v): v is string => typeof v === 'string');

const FIELDS: FieldSpec[] = [
  {
    field: 'name',
    weight: 4,
    bare: weighted<unknown>([6, stringOperand(present('name'))], [1, fc.constant(null)]),
    ops: [
      ...comparisons(stringOperand(present('name'))),
      regex(STRINGS_AT('name')),
      regex(STRINGS_AT('name')),
    ],
  },
  {
    field: 'price',
    weight: 4,
    bare: weighted<unknown>([6, numberOperand(present('price'))], [1, fc.constant(null)]),
    ops: [...comparisons(numberOperand(present('price'))), mod],
  },
  {
    field: 'qty',
    weight: 3,
    bare: numberOperand(present('qty')),
    ops: [...comparisons(numberOperand(present('qty'))), mod, mod],
  },
  {
    field: 'active',
    weight: 2,
    bare: weighted<unknown>([6, fc.boolean()], [1, fc.constant(null)]),
    ops: comparisons(fc.boolean()),
  },
  {
    field: 'shippedAt',
    weight: 3,
    bare: dateOperand,
    ops: comparisons(dateOperand),
  },
  {
    field: 'tags',
    weight: 2,
    ops: [single('$exists', fc.boolean()), single('$size', fc.integer({ min: 0, max: 5 }))],
  },
  { field: 'customer', weight: 1, ops: [single('$exists', fc.boolean())] },
  ...['customer.age', 'customer.city', 'customer.vip', 'customer.address.zip'].map((field): FieldSpec => ({
    field,
    weight: 2,
    bare: weighted<unknown>([6, pathOperand(present(field))], [1, fc.constant(null)]),
    ops: [...comparisons(pathOperand(present(field))), regex([...STRINGS_AT(field), 'Paris', '12']), mod],
  })),
  {
    field: 'customer.address',
    weight: 1,
    ops: [
      single('$exists', fc.boolean()),
      single('$eq', pathOperand(['none'])),
      single('$ne', fc.constant('none')),
    ],
  },
  {
    field: 'id',
    weight: 2,
    bare: fc.integer({ min: 0, max: ROWS.length + 2 }),
    ops: comparisons(
      weighted<number>(
        [4, fc.integer({ min: 1, max: ROWS.length })],
        [1, fc.integer({ min: -2, max: 2 * ROWS.length + 4 }).map((n) => n / 2)],
      ),
    ),
  },
  { field: 'createdAt', weight: 2, bare: createdOperand, ops: comparisons(createdOperand) },
];

function conditionOf(spec: FieldSpec): fc.Arbitrary<unknown> {
  const operators = fc
    .array(fc.oneof(...spec.ops), { minLength: 1, maxLength: 2 })
    .map((entries) => Object.fromEntries(entries.flat()));
  return spec.bare ? weighted<unknown>([1, spec.bare], [3, operators]) : operators;
}

const fieldEntry: fc.Arbitrary<[string, unknown]> = weighted(
  ...FIELDS.map((spec): [number, fc.Arbitrary<[string, unknown]>] => [
    spec.weight,
    conditionOf(spec).map((condition): [string, unknown] => [spec.field, condition]),
  ]),
);

/** A filter of at most `depth` levels of $and / $or / $not, with 1 to 3 keys a level. */
function filterOf(depth: number): fc.Arbitrary<Filter> {
  const entry =
    depth === 0
      ? fieldEntry
      : weighted<[string, unknown]>(
          [5, fieldEntry],
          [
            1,
            fc
              .array(filterOf(depth - 1), { minLength: 1, maxLength: 3 })
              .map((fs): [string, unknown] => ['$and', fs]),
          ],
          [
            1,
            fc
              .array(filterOf(depth - 1), { minLength: 1, maxLength: 3 })
              .map((fs): [string, unknown] => ['$or', fs]),
          ],
          [1, filterOf(depth - 1).map((f): [string, unknown] => ['$not', f])],
        );
  return fc.array(entry, { minLength: 1, maxLength: 3 }).map((entries) => Object.fromEntries(entries));
}

// ---------------------------------------------------------------------------------------------------
// The stores.
// ---------------------------------------------------------------------------------------------------

interface StoreUnderTest {
  store: TestStore;
  t: TestServer;
  bot: TestBot;
  rows: StoredRow[];
}

/** What a store answered: ids, or the error it gave. */
type Answer = { ids: number[]; hasMore: boolean } | { error: string };

async function find(s: StoreUnderTest, request: Record<string, unknown>): Promise<Answer> {
  try {
    const res = await s.bot.client.findTableRows({ table: TABLE, ...request });
    return { ids: res.rows.map((r) => r.id), hasMore: res.hasMore };
  } catch (err) {
    return { error: isApiError(err) ? `${err.code} ${err.type}: ${err.message}` : String(err) };
  }
}

const list = (ids: number[], max = 40) =>
  `[${ids.slice(0, max).join(',')}${ids.length > max ? `,… (${ids.length})` : ''}]`;

/** One store's disagreement with the evaluator, in words (undefined when they agree). */
function disagreement(
  s: StoreUnderTest,
  answer: Answer,
  expected: number[],
  hasMore?: boolean,
): string | undefined {
  if ('error' in answer) return `${s.store.name}: error ${answer.error}; evaluator ${list(expected)}`;
  const same = answer.ids.length === expected.length && answer.ids.every((id, i) => id === expected[i]);
  if (same && (hasMore === undefined || answer.hasMore === hasMore)) return undefined;
  const got = new Set(answer.ids);
  const want = new Set(expected);
  const missing = expected.filter((id) => !got.has(id));
  const extra = answer.ids.filter((id) => !want.has(id));
  const sample = [...missing.slice(0, 2), ...extra.slice(0, 2)]
    .map((id) => `#${id} = ${JSON.stringify(s.rows.find((r) => r.id === id)?.data)}`)
    .join('; ');
  return (
    `${s.store.name}: got ${list(answer.ids)} (hasMore ${answer.hasMore}), evaluator ${list(expected)}` +
    `${hasMore !== undefined ? ` (hasMore ${hasMore})` : ''}; missing ${list(missing, 10)}, extra ${list(extra, 10)}` +
    (sample ? `; ${sample}` : '')
  );
}

const all = await testStores();
const available = all.filter((s) => !s.skip);

describe('Tables filters: SQLite, Postgres and a plain evaluator of docs/tables.md agree', () => {
  const stores: StoreUnderTest[] = [];
  const servers: TestServer[] = [];

  before(async () => {
    for (const store of available) {
      const t = await startTestServer(store);
      servers.push(t);
      const bot = await createTestBot(t, 'tables-filter');
      await bot.client.createTable({ name: TABLE, schema: SCHEMA });
      const ids: number[] = [];
      let at = 0;
      for (const size of BATCHES) {
        const res = await bot.client.createTableRows({ table: TABLE, rows: ROWS.slice(at, at + size) });
        assert.deepEqual(res.errors ?? [], [], `${store.name}: no row refused in the batch at ${at}`);
        ids.push(...res.rows.map((r) => r.id));
        at += size;
        await sleep(15);
      }
      assert.equal(ids.length, ROWS.length, `${store.name}: every row created`);
      const { rows: read } = await bot.client.findTableRows({ table: TABLE, limit: 1000, orderBy: 'id' });
      const createdAt = new Map(read.map((r) => [r.id, r.createdAt]));
      stores.push({
        store,
        t,
        bot,
        rows: ROWS.map((data, i) => {
          const id = ids[i] ?? 0;
          const created = createdAt.get(id);
          assert.ok(typeof created === 'string', `${store.name}: row #${id} has a createdAt`);
          return { id, createdAt: created, data };
        }),
      });
    }
  });
  after(async () => {
    for (const t of servers) await t.close();
  });

  for (const s of all.filter((x) => x.skip)) test(`(${s.name})`, { skip: s.skip }, () => {});

  test('the rows read back as written (the evaluator works on what was written)', async () => {
    for (const s of stores) {
      assert.deepEqual(
        s.rows.map((r) => r.id),
        ROWS.map((_, i) => i + 1),
        `${s.store.name}: ids from 1`,
      );
      const { rows } = await s.bot.client.findTableRows({ table: TABLE, limit: 1000, orderBy: 'id' });
      const normal = (row: Record<string, unknown>) =>
        Object.fromEntries(
          Object.keys(SCHEMA.properties)
            .map((k) => [k, row[k] ?? null] as const)
            .filter(([, v]) => v !== null)
            .map(([k, v]) => [k, k === 'shippedAt' ? new Date(v as string).toISOString() : v]),
        );
      for (const [i, row] of rows.entries()) {
        assert.deepEqual(normal(row), normal(ROWS[i] ?? {}), `${s.store.name}: row #${row.id}`);
      }
    }
  });

  test(`${RUNS} generated filters: every store answers the evaluator's rows`, async (t) => {
    assert.ok(stores.length > 0);
    let runs = 0;
    let someRows = 0;
    let notAll = 0;
    await fc.assert(
      fc.asyncProperty(filterOf(3), async (filter) => {
        runs++;
        const problems: string[] = [];
        const lines: string[] = [];
        const answers: Answer[] = [];
        for (const s of stores) {
          const resolved = resolveTokens(filter, s.rows) as Filter;
          const expected = s.rows.filter((row) => matches(row, resolved)).map((row) => row.id);
          if (expected.length > 0) someRows++;
          if (expected.length < s.rows.length) notAll++;
          const answer = await find(s, { filter: resolved, limit: 1000, orderBy: 'id' });
          answers.push(answer);
          const problem = disagreement(s, answer, expected, false);
          if (problem) problems.push(problem);
          if (mentionsCreatedAt(filter)) lines.push(`${s.store.name} filter: ${JSON.stringify(resolved)}`);
        }
        const [first, ...others] = answers;
        if (first && 'ids' in first && !mentionsCreatedAt(filter)) {
          for (const [i, other] of others.entries()) {
            if ('ids' in other && JSON.stringify(other.ids) !== JSON.stringify(first.ids)) {
              problems.push(`${stores[0]?.store.name} and ${stores[i + 1]?.store.name} answer differently`);
            }
          }
        }
        assert.deepEqual(
          problems,
          [],
          `filter ${JSON.stringify(filter)}\n${[...lines, ...problems].join('\n')}`,
        );
      }),
      { numRuns: RUNS, seed: SEED, includeErrorInReport: true },
    );
    t.diagnostic(
      `${runs} filters × ${stores.length} stores: ${someRows} answers hold rows, ${notAll} leave rows out`,
    );
    // The generator must write filters that select something, and not everything.
    assert.ok(someRows >= runs * stores.length * 0.3, `${someRows} of ${runs} answers hold rows`);
    assert.ok(notAll >= runs * stores.length * 0.5, `${notAll} of ${runs} answers leave rows out`);
  });

  test(`${Math.max(30, Math.round(RUNS / 4))} generated $regex filters alone: every store answers the evaluator's rows`, async () => {
    // Denser than among all filters: the translation to Postgres's engine is checked pattern by pattern.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('name', 'name', 'name', 'customer.city'),
        regex(STRINGS_AT('name')),
        async (field, entries) => {
          const filter = { [field]: Object.fromEntries(entries) };
          const problems: string[] = [];
          for (const s of stores) {
            const expected = s.rows.filter((row) => matches(row, filter)).map((row) => row.id);
            const problem = disagreement(s, await find(s, { filter, limit: 1000, orderBy: 'id' }), expected);
            if (problem) problems.push(problem);
          }
          assert.deepEqual(problems, [], `filter ${JSON.stringify(filter)}\n${problems.join('\n')}`);
        },
      ),
      { numRuns: Math.max(30, Math.round(RUNS / 4)), seed: SEED + 2, includeErrorInReport: true },
    );
  });

  test('orderBy, orderDirection, limit and offset: the evaluator’s order, page by page', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          orderBy: fc.constantFrom('price', 'name', 'shippedAt', 'qty', 'active', 'createdAt', 'id'),
          orderDirection: fc.constantFrom(undefined, 'asc' as const, 'desc' as const),
          limit: fc.integer({ min: 1, max: 60 }),
          offset: fc.integer({ min: 0, max: 160 }),
          filter: fc.option(filterOf(1), { nil: undefined }),
        }),
        async ({ orderBy, orderDirection, limit, offset, filter }) => {
          const problems: string[] = [];
          for (const s of stores) {
            const resolved = filter && (resolveTokens(filter, s.rows) as Filter);
            const selected = resolved ? s.rows.filter((row) => matches(row, resolved)) : s.rows;
            const sorted = ordered(selected, orderBy, orderDirection ?? 'asc').map((r) => r.id);
            const expected = sorted.slice(offset, offset + limit);
            const request = { orderBy, orderDirection, limit, offset, filter: resolved };
            const problem = disagreement(s, await find(s, request), expected, sorted.length > offset + limit);
            if (problem) problems.push(`${problem}\n  request ${JSON.stringify(request)}`);
          }
          assert.deepEqual(problems, [], problems.join('\n'));
        },
      ),
      { numRuns: Math.max(20, Math.round(RUNS / 2)), seed: SEED + 1, includeErrorInReport: true },
    );
  });

  test('orderBy each column, both directions, without a page: the whole order', async () => {
    const problems: string[] = [];
    for (const s of stores) {
      for (const orderBy of ['price', 'name', 'shippedAt', 'qty', 'active', 'createdAt', 'id']) {
        for (const orderDirection of ['asc', 'desc'] as const) {
          const expected = ordered(s.rows, orderBy, orderDirection).map((r) => r.id);
          const problem = disagreement(
            s,
            await find(s, { orderBy, orderDirection, limit: 1000 }),
            expected,
            false,
          );
          if (problem) problems.push(`orderBy ${orderBy} ${orderDirection}: ${problem}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('invalid filters are 400 InvalidQuery', async () => {
    const invalid: [string, Filter][] = [
      ['an unknown column', { colour: 'red' }],
      ['an operator without $', { price: { gte: 1 } }],
      ['an unknown $operator', { price: { $between: [1, 2] } }],
      ['an unknown operator at the filter level', { $nor: [{ price: 1 }] }],
      ['an empty $in', { price: { $in: [] } }],
      ['an empty $nin', { name: { $nin: [] } }],
      ['an empty $and', { $and: [] }],
      ['an empty $or', { $or: [] }],
      ['$mod by 0', { qty: { $mod: [0, 1] } }],
      ['$mod by a fraction', { qty: { $mod: [0.5, 0] } }],
      ['$mod with one number', { qty: { $mod: [2] } }],
      ['$mod on a text column', { name: { $mod: [2, 0] } }],
      ['a string operand on a number column', { price: { $gt: '5' } }],
      ['a bare string on a number column', { price: 'cheap' }],
      ['a string in $in on a number column', { price: { $in: [1, '2'] } }],
      ['a number operand on a text column', { name: { $eq: 5 } }],
      ['a number on a boolean column', { active: 1 }],
      ['a text that is no date', { shippedAt: { $gte: 'not a date' } }],
      ['a string operand on id', { id: { $lt: '5' } }],
      ['a comparison on an array column', { tags: { $eq: 'red' } }],
      ['a comparison on an object column', { customer: { $eq: 'x' } }],
      ['$size on a text column', { name: { $size: 1 } }],
      ['a negative $size', { tags: { $size: -1 } }],
      ['$regex on a number column', { price: { $regex: '1' } }],
      ['a back-reference', { name: { $regex: '(a)\\1' } }],
      ['a look-ahead', { name: { $regex: 'a(?=b)' } }],
      ['a look-behind', { name: { $regex: '(?<=a)b' } }],
      ['a Unicode class', { name: { $regex: '\\pL' } }],
      ['an inline flag', { name: { $regex: '(?i)a' } }],
      ['a count above 255', { name: { $regex: 'a{256}' } }],
      ['a regex RE2 refuses', { name: { $regex: 'a{2,1}' } }],
      ['a regex of 1,025 characters', { name: { $regex: 'a'.repeat(1025) } }],
      ['an unknown $options', { name: { $regex: 'a', $options: 'x' } }],
      ['a path into a text column', { 'name.first': 'a' }],
      ['an object operand inside an object column', { 'customer.age': { $eq: { a: 1 } } }],
      ['an invalid filter inside $or', { $or: [{ price: 1 }, { nope: 1 }] }],
      ['an invalid filter inside $not', { $not: { price: { gte: 1 } } }],
    ];
    const problems: string[] = [];
    for (const s of stores) {
      for (const [what, filter] of invalid) {
        try {
          const err = await rejectsWith(
            s.bot.client.findTableRows({ table: TABLE, filter }),
            InvalidQueryError,
          );
          assert.equal(err.code, 400);
        } catch (err) {
          problems.push(`${s.store.name}, ${what} ${JSON.stringify(filter)}: ${(err as Error).message}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
});
