import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import type { BotActor } from '../workspace/actors.ts';
import { FilterCompiler, filterFailure, invalidQuery, resolveField } from './filter.ts';
import type { Field } from './filter.ts';
import { rowView } from './record.ts';
import type { StoredRow, TableRecord, TableRow } from './record.ts';
import { TableSearch } from './search.ts';
import type { Tables } from './tables.ts';
import { jsonValue } from './values.ts';
import { FIND_LIMIT_DEFAULT } from './limits.ts';

export const GROUP_OPS = ['key', 'count', 'sum', 'avg', 'max', 'min', 'unique'] as const;
export type GroupOp = (typeof GROUP_OPS)[number];

export interface FindQuery {
  filter?: unknown;
  group?: unknown;
  search?: string | undefined;
  select?: string[] | undefined;
  orderBy?: string | undefined;
  orderDirection?: 'asc' | 'desc' | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

export interface FoundRows {
  rows: JsonObject[];
  hasMore: boolean;
  offset: number;
  limit: number;
  warnings?: string[];
}

/** Which operations each type of field takes in a group. */
const GROUPABLE: Record<string, readonly GroupOp[]> = {
  number: GROUP_OPS,
  id: GROUP_OPS,
  string: ['key', 'count', 'max', 'min', 'unique'],
  date: ['key', 'count', 'max', 'min', 'unique'],
  boolean: ['key', 'count', 'unique'],
  object: ['count'],
  array: ['count'],
};

/** Reads of a table's rows: `findTableRows`, compiled to one SQL query on the table's own row table. */
export class TableQueries {
  constructor(
    private readonly store: Store,
    private readonly tables: Tables,
    private readonly search: TableSearch,
  ) {}

  async find(actor: BotActor, ref: string, query: FindQuery): Promise<FoundRows> {
    const table = await this.tables.require(this.store.db, actor, ref);
    const limit = query.limit ?? FIND_LIMIT_DEFAULT;
    const offset = query.offset ?? 0;
    const filter = new FilterCompiler(this.store.sql, table.columns).compile(query.filter ?? {});
    try {
      const found = query.search?.trim() ? await this.ranking(actor, table, query.search) : undefined;
      const ranking = found?.scores;
      const where = ranking
        ? sql<SqlBool>`(${filter} and id in (${sql.join([0, ...ranking.keys()])}))`
        : filter;
      const page =
        query.group !== undefined
          ? await this.groups(table, where, query.group, limit, offset)
          : ranking
            ? await this.ranked(table, where, ranking, query.select, limit, offset)
            : await this.rows(table, where, query, limit, offset);
      return { ...page, offset, limit, ...(found?.warnings && { warnings: found.warnings }) };
    } catch (err) {
      throw filterFailure(err);
    }
  }

  private async rows(
    table: TableRecord,
    where: RawBuilder<unknown>,
    query: FindQuery,
    limit: number,
    offset: number,
  ): Promise<{ rows: JsonObject[]; hasMore: boolean }> {
    const order = this.order(table, query.orderBy ?? 'id', query.orderDirection ?? 'asc');
    const select = (query.select ?? []).map((name) => resolveField(table.columns, name, 'select'));
    const { rows } = await sql<StoredRow>`
      select * from ${sql.id(table.storage)} where ${where}
      order by ${order} limit ${limit + 1} offset ${offset}`.execute(this.store.db);
    const page = rows.slice(0, limit).map((row) => rowView(table.columns, row));
    return {
      rows: select.length === 0 ? page : page.map((row) => selected(row, select)),
      hasMore: rows.length > limit,
    };
  }

  /** The rows a search finds (among the best SEARCH_HITS of the table), row id → score, and its warnings. */
  private async ranking(actor: BotActor, table: TableRecord, search: string) {
    if (!TableSearch.searchable(table)) {
      throw invalidQuery(`search: no column of table "${table.name}" is searchable (x-zui.searchable)`);
    }
    return this.search.search(this.store.db, actor, table, search);
  }

  /**
   * Rows a search found that pass the filter, best first, with their `similarity` (the score over the
   * best score, in [0, 1]: the best row has 1). At most SEARCH_HITS rows, so ordering them here is bounded.
   */
  private async ranked(
    table: TableRecord,
    where: RawBuilder<SqlBool>,
    ranking: Map<number, number>,
    select: string[] | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: JsonObject[]; hasMore: boolean }> {
    const fields = (select ?? []).map((name) => resolveField(table.columns, name, 'select'));
    const { rows } = await sql<StoredRow>`select * from ${sql.id(table.storage)} where ${where}`.execute(
      this.store.db,
    );
    const best = Math.max(...ranking.values());
    const score = (id: number) => ranking.get(id) ?? 0;
    const sorted = rows
      .map((row) => rowView(table.columns, row))
      .sort((a, b) => score(b.id) - score(a.id) || a.id - b.id);
    const page = sorted.slice(offset, offset + limit).map((row) => ({
      ...(fields.length === 0 ? row : selected(row, fields)),
      similarity: best > 0 ? score(row.id) / best : 0,
    }));
    return { rows: page, hasMore: sorted.length > offset + limit };
  }

  private order(table: TableRecord, orderBy: string, direction: 'asc' | 'desc'): RawBuilder<unknown> {
    const field = resolveField(table.columns, orderBy, 'orderBy', false);
    if (field.kind !== 'column' || field.type === 'object' || field.type === 'array') {
      throw invalidQuery(`orderBy: "${orderBy}" is no column rows can be ordered by`);
    }
    const column = sql.ref(field.sql);
    const tie = sql`id asc`;
    if (field.sql === 'id') return sql`id ${sql.raw(direction)}`;
    // Nulls last ascending, first descending, on both stores (their defaults differ).
    return direction === 'asc'
      ? sql`(${column} is null) asc, ${column} asc, ${tie}`
      : sql`(${column} is null) desc, ${column} desc, ${tie}`;
  }

  private async groups(
    table: TableRecord,
    where: RawBuilder<unknown>,
    group: unknown,
    limit: number,
    offset: number,
  ): Promise<{ rows: JsonObject[]; hasMore: boolean }> {
    if (
      typeof group !== 'object' ||
      group === null ||
      Array.isArray(group) ||
      Object.keys(group).length === 0
    ) {
      throw invalidQuery(
        'group must be an object of columns and operations: { "status": "key", "price": ["sum", "avg"] }',
      );
    }
    const outputs: {
      name: string;
      op: GroupOp;
      field: Extract<Field, { kind: 'column' }>;
      expression: RawBuilder<unknown>;
    }[] = [];
    for (const [name, given] of Object.entries(group)) {
      const ops: unknown[] = Array.isArray(given) ? given : [given];
      if (ops.length === 0) throw invalidQuery(`group.${name} names no operation`);
      const field = resolveField(table.columns, name, `group.${name}`, false);
      if (field.kind !== 'column') throw invalidQuery(`group.${name}: groups take columns, not paths`);
      for (const op of ops) {
        if (typeof op !== 'string' || !(GROUP_OPS as readonly string[]).includes(op)) {
          throw invalidQuery(`group.${name}: "${String(op)}" is not one of ${GROUP_OPS.join(', ')}`);
        }
        const groupOp = op as GroupOp;
        if (!GROUPABLE[field.type]?.includes(groupOp)) {
          throw invalidQuery(`group.${name}: "${groupOp}" does not apply to a ${field.type} column`);
        }
        outputs.push({
          name: `${name}${groupOp[0]?.toUpperCase()}${groupOp.slice(1)}`,
          op: groupOp,
          field,
          expression: this.aggregate(groupOp, field.sql),
        });
      }
    }
    const keys = outputs.filter((o) => o.op === 'key');
    const selections = sql.join(outputs.map((o, i) => sql`${o.expression} as ${sql.id(`g${i}`)}`));
    const groupBy =
      keys.length > 0 ? sql` group by ${sql.join(keys.map((k) => sql.ref(k.field.sql)))}` : sql``;
    const orderBy =
      keys.length > 0
        ? sql` order by ${sql.join(keys.map((k) => sql`(${sql.ref(k.field.sql)} is null) asc, ${sql.ref(k.field.sql)} asc`))}`
        : sql``;
    const { rows } = await sql<Record<string, unknown>>`
      select ${selections} from ${sql.id(table.storage)} where ${where}${groupBy}${orderBy}
      limit ${limit + 1} offset ${offset}`.execute(this.store.db);
    const page = rows.slice(0, limit).map((row) => {
      const out: JsonObject = {};
      outputs.forEach((o, i) => (out[o.name] = groupValue(o.op, o.field.type, row[`g${i}`])));
      return out;
    });
    return { rows: page, hasMore: rows.length > limit };
  }

  private aggregate(op: GroupOp, column: string): RawBuilder<unknown> {
    const ref = sql.ref(column);
    switch (op) {
      case 'key':
        return ref;
      case 'count':
        return sql`count(${ref})`;
      case 'sum':
        return sql`sum(${ref})`;
      case 'avg':
        return sql`avg(${ref})`;
      case 'max':
        return sql`max(${ref})`;
      case 'min':
        return sql`min(${ref})`;
      case 'unique':
        return sql`${this.store.sql.jsonArrayAggDistinct(ref)} filter (where ${ref} is not null)`;
    }
  }
}

/** An aggregate as the API answers it. */
function groupValue(op: GroupOp, type: string, value: unknown): Json {
  if (value === null || value === undefined) return op === 'unique' ? [] : op === 'count' ? 0 : null;
  if (op === 'count' || op === 'sum' || op === 'avg') return Number(value);
  const columnType = type === 'id' ? 'number' : (type as 'string');
  if (op === 'unique') {
    const values = (typeof value === 'string' ? JSON.parse(value) : value) as unknown[];
    return values.map((v) => jsonValue(columnType, v)).sort(compareScalars);
  }
  return jsonValue(columnType, value);
}

/** Numbers by value, text by code point (UTF-8 byte order, as both stores order text), false before true. */
function compareScalars(a: Json, b: Json): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return Number(a === true) - Number(b === true);
}

/** A row with only the system fields and the selected columns (or paths into them). */
function selected(row: TableRow, fields: Field[]): JsonObject {
  const out: JsonObject = {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    computed: row.computed,
    stale: row.stale,
  };
  for (const field of fields) {
    if (field.kind === 'column') {
      out[field.name] = row[field.name] ?? null;
      continue;
    }
    const [head = '', ...path] = field.name.split('.');
    let value: Json | undefined = row[head];
    for (const segment of path) {
      value =
        typeof value === 'object' && value !== null && !Array.isArray(value) ? value[segment] : undefined;
    }
    // Rebuild the nesting down to the selected value.
    let target: JsonObject = out;
    const parent = (out[head] ??= {});
    if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) continue;
    target = parent;
    path.slice(0, -1).forEach((segment) => {
      const next = (target[segment] ??= {});
      if (typeof next === 'object' && next !== null && !Array.isArray(next)) target = next;
    });
    const last = path.at(-1);
    if (last !== undefined) target[last] = value ?? null;
  }
  return out;
}
