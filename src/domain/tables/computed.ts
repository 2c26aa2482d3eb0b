import { ApiError } from '../shared/errors.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Column } from './columns.ts';
import type { TableRecord, TableRow } from './record.ts';

/**
 * Computed columns (`x-zui.computed`). Those computed by `code` run in the bot's sandbox with the row as
 * input when a column they depend on changes; `ai` and `workflow` ones are kept as defined, their values
 * stale (this server has no model to run them).
 */
export interface ComputedDefinition {
  action: 'ai' | 'code' | 'workflow';
  /** Columns whose change makes it stale; none: any change of a column that is not computed. */
  dependencies?: string[];
  code?: string;
  enabled?: boolean;
}

/** A computed column's state on one row, as rows answer it in `computed`. */
export interface ComputedStatus {
  status: 'stale' | 'computed' | 'error';
  error?: string;
  updatedAt?: string;
}

export type ComputedOutcome = { value: Json } | { error: string };

/** Runs computed columns' code for the rows of a table: the engine implements it with the sandbox. */
export interface ColumnComputer {
  compute(
    actor: BotActor,
    table: TableRecord,
    row: TableRow,
    columns: Column[],
  ): Promise<Record<string, ComputedOutcome>>;
  /** Rows were written whose columns are due: compute them soon (TableRows.computeDue). */
  wake(): void;
}

/** Longest code of a computed column. */
export const MAX_COMPUTED_CODE = 64 * 1024;

const invalidSchema = (message: string) => new ApiError('InvalidJsonSchema', message);

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A column's computed definition, if it has one (checked when the schema is given). */
export function computedOf(column: Column): ComputedDefinition | undefined {
  const zui = column.schema['x-zui'];
  if (!isObject(zui) || zui.computed === undefined) return undefined;
  const computed = zui.computed;
  const where = `Column "${column.name}": x-zui.computed`;
  if (!isObject(computed)) throw invalidSchema(`${where} must be an object`);
  const { action, dependencies, code, enabled } = computed;
  if (action !== 'ai' && action !== 'code' && action !== 'workflow') {
    throw invalidSchema(`${where}.action must be "ai", "code" or "workflow"`);
  }
  if (
    dependencies !== undefined &&
    !(Array.isArray(dependencies) && dependencies.every((d) => typeof d === 'string'))
  ) {
    throw invalidSchema(`${where}.dependencies must be a list of column names`);
  }
  if (code !== undefined && (typeof code !== 'string' || code.length > MAX_COMPUTED_CODE)) {
    throw invalidSchema(`${where}.code must be JavaScript of at most ${MAX_COMPUTED_CODE} characters`);
  }
  if (action === 'code' && typeof code !== 'string')
    throw invalidSchema(`${where}: action "code" needs its code`);
  if (enabled !== undefined && typeof enabled !== 'boolean')
    throw invalidSchema(`${where}.enabled must be a boolean`);
  return {
    action,
    ...(dependencies !== undefined && { dependencies: dependencies }),
    ...(typeof code === 'string' && { code }),
    ...(enabled !== undefined && { enabled }),
  };
}

/** Checks every computed definition of a schema; answers how many columns code computes. */
export function checkComputed(columns: Column[]): number {
  let code = 0;
  for (const column of columns) {
    const computed = computedOf(column);
    if (!computed) continue;
    for (const dependency of computed.dependencies ?? []) {
      if (!columns.some((c) => c.name === dependency)) {
        throw invalidSchema(
          `Column "${column.name}" depends on "${dependency}", which is no column of the table`,
        );
      }
    }
    if (computed.action === 'code' && computed.enabled !== false) code++;
  }
  return code;
}

/** The computed columns a write makes stale: those depending on a changed column (all of them for a new row). */
export function staleAfter(table: TableRecord, changed: Set<string> | 'all'): Column[] {
  return table.columns.filter((column) => {
    const computed = computedOf(column);
    if (!computed) return false;
    if (changed === 'all') return true;
    const dependencies =
      computed.dependencies ?? table.columns.filter((c) => !computedOf(c)).map((c) => c.name);
    return dependencies.some((d) => changed.has(d));
  });
}

/** Whether the server computes this column (code, enabled, on a table whose computing is on). */
export function isRunnable(table: TableRecord, column: Column): boolean {
  const computed = computedOf(column);
  return table.computeEnabled && computed?.action === 'code' && computed.enabled !== false;
}

/**
 * The SQL columns of a row's computed state once `stale` columns are stale too (besides those of
 * `previous`, the row as it was): undefined when the write makes none stale.
 */
export function staleState(
  table: TableRecord,
  stale: Column[],
  previous?: Pick<TableRow, 'stale' | 'computed'>,
): Map<string, string | number> | undefined {
  if (stale.length === 0) return undefined;
  const names = [...new Set([...(previous?.stale ?? []), ...stale.map((c) => c.name)])];
  const computed: JsonObject = { ...previous?.computed };
  for (const column of stale) computed[column.name] = { status: 'stale' };
  const due = table.columns.some((c) => names.includes(c.name) && isRunnable(table, c));
  return new Map<string, string | number>([
    ['stale', JSON.stringify(names)],
    ['computed', JSON.stringify(computed)],
    ['compute_due', due ? 1 : 0],
  ]);
}
