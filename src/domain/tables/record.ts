import type { Row } from '../../store/schema.ts';
import { fromJson } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import { sqlColumn, tableSchema } from './columns.ts';
import type { Column } from './columns.ts';
import { jsonValue } from './values.ts';

/** A table as the domain works with it: its record, its columns read. */
export interface TableRecord {
  id: string;
  botId: string;
  name: string;
  columns: Column[];
  factor: number;
  frozen: boolean;
  keyColumn: string | null;
  tags: Record<string, string>;
  computeEnabled: boolean;
  storage: string;
  nextPosition: number;
  /** How many columns code computes. */
  codeColumns: number;
  createdAt: string;
  updatedAt: string;
}

export function tableRecord(row: Row<'tables'>): TableRecord {
  return {
    id: row.id,
    botId: row.bot_id,
    name: row.name,
    columns: fromJson<Column[]>(row.columns),
    factor: row.factor,
    frozen: row.frozen === 1,
    keyColumn: row.key_column,
    tags: fromJson<Record<string, string>>(row.tags),
    computeEnabled: row.compute_enabled === 1,
    storage: row.storage,
    nextPosition: row.next_position,
    codeColumns: row.code_columns ?? 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A table as the API answers it. */
export interface Table {
  id: string;
  name: string;
  factor: number;
  frozen: boolean;
  keyColumn: string | null;
  schema: JsonObject;
  tags: Record<string, string>;
  isComputeEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export function tableView(table: TableRecord): Table {
  return {
    id: table.id,
    name: table.name,
    factor: table.factor,
    frozen: table.frozen,
    keyColumn: table.keyColumn,
    schema: tableSchema(table.columns),
    tags: table.tags,
    isComputeEnabled: table.computeEnabled,
    createdAt: table.createdAt,
    updatedAt: table.updatedAt,
  };
}

/** A row as the API answers it: system fields, then the columns, flattened. */
export type TableRow = JsonObject & {
  id: number;
  createdAt: string;
  updatedAt: string;
  computed: JsonObject;
  stale: string[];
};

/** A row of a row table as read (`select *`). */
export type StoredRow = Record<string, unknown> & {
  id: number;
  created_at: string;
  updated_at: string;
  stale: string | null;
  computed: string | JsonObject | null;
};

export function rowView(columns: Column[], stored: StoredRow): TableRow {
  const exists = (name: string) => columns.some((c) => c.name === name);
  const row: TableRow = {
    id: Number(stored.id),
    createdAt: stored.created_at,
    updatedAt: stored.updated_at,
    // Only columns the table has: a removed column's state may linger in rows it was never cleared from.
    computed: Object.fromEntries(
      Object.entries(
        typeof stored.computed === 'string' ? fromJson<JsonObject>(stored.computed) : (stored.computed ?? {}),
      ).filter(([name]) => exists(name)),
    ),
    stale: (stored.stale ? fromJson<string[]>(stored.stale) : []).filter(exists),
  };
  for (const column of columns) row[column.name] = jsonValue(column.type, stored[sqlColumn(column)]);
  return row;
}
