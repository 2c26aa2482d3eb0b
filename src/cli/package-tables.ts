import { isDeepStrictEqual } from 'node:util';
import { columnFrom, columnSchema } from '../domain/tables/columns.ts';
import type { Column } from '../domain/tables/columns.ts';
import type { JsonObject } from '../domain/shared/json.ts';
import { columnsOf } from '../package/tables.ts';
import type { PackageTables } from '../package/tables.ts';
import { CliError } from './errors.ts';
import { columnSchemas } from './tables-api.ts';
import type { RemoteTable, TablesClient } from './tables-api.ts';

type Definition = PackageTables[string];

/** What deploying a package's table does to the bot's table of that name. */
export interface TableMigration {
  definition: Definition;
  /** Absent: the table does not exist yet and is created. */
  existing?: RemoteTable;
  added: string[];
  /** Columns of the same type whose definition changed (nullable, description, x-zui...): values stay. */
  changed: string[];
  /** Columns the package no longer has: destructive. */
  removed: string[];
  /** Columns whose type changed: destructive, their values are emptied. */
  retyped: { name: string; from: string; to: string }[];
  /** The updateTable body; absent when the table is as the package says. */
  update?: JsonObject;
  /** The settings that change (key column, tags, factor), as told. */
  settings: string[];
  /** Said but not done: the factor only grows. */
  notes: string[];
}

const noChanges = (): Omit<TableMigration, 'definition'> => ({
  added: [],
  changed: [],
  removed: [],
  retyped: [],
  settings: [],
  notes: [],
});
const list = (names: string[]) => names.join(', ');

/** A column without what differs between two tables holding it alike (its place, an empty x-zui). */
function comparable(column: Column): unknown {
  const { 'x-zui': zui, ...schema } = column.schema;
  const ui = zui !== null && typeof zui === 'object' && Object.keys(zui).length > 0 ? zui : undefined;
  return { type: column.type, nullable: column.nullable, schema: { ...schema, ...(ui && { 'x-zui': ui }) } };
}

function compare(definition: Definition, existing: RemoteTable): TableMigration {
  const found = columnsOf(definition.schema);
  // The package was validated: its schema has no problem.
  const [problem] = found.problems;
  if (problem) throw new CliError(`table ${definition.name}: ${problem[1]}`);
  const current = new Map(
    Object.entries(columnSchemas(existing)).map(([name, p], i) => [name, columnFrom(name, p, i, true)]),
  );
  const migration: TableMigration = { definition, existing, ...noChanges() };
  const patch: JsonObject = {};
  for (const column of found.columns) {
    const was = current.get(column.name);
    if (!was) migration.added.push(column.name);
    else if (was.type !== column.type)
      migration.retyped.push({ name: column.name, from: was.type, to: column.type });
    else if (!isDeepStrictEqual(comparable(was), comparable(column))) migration.changed.push(column.name);
    else continue;
    patch[column.name] = columnSchema(column);
  }
  const wanted = new Set(found.columns.map((c) => c.name));
  for (const name of current.keys()) {
    if (wanted.has(name)) continue;
    migration.removed.push(name);
    patch[name] = null;
  }
  const update: JsonObject = {};
  if (Object.keys(patch).length > 0) update.schema = { type: 'object', properties: patch };
  const keyColumn = definition.keyColumn ?? null;
  if (keyColumn !== existing.keyColumn) {
    update.keyColumn = keyColumn;
    migration.settings.push(`key column ${keyColumn ?? 'none'}`);
  }
  const tags = Object.entries(definition.tags ?? {}).filter(([k, v]) => existing.tags[k] !== v);
  if (tags.length > 0) {
    update.tags = Object.fromEntries(tags);
    migration.settings.push(`tags ${list(tags.map(([k, v]) => `${k}=${v}`))}`);
  }
  const { factor } = definition;
  if (factor !== undefined && factor > existing.factor) {
    update.factor = factor;
    migration.settings.push(`factor ${factor}`);
  }
  if (factor !== undefined && factor < existing.factor)
    migration.notes.push(`its factor stays ${existing.factor}: a factor only grows`);
  return Object.keys(update).length > 0 ? { ...migration, update } : migration;
}

/** Compares each table of the package with the bot's table of that name (one request: listTables). */
export async function planTables(api: TablesClient, tables: PackageTables): Promise<TableMigration[]> {
  const definitions = Object.values(tables);
  if (definitions.length === 0) return [];
  const { tables: existing } = await api.listTables();
  return definitions.map((definition) => {
    const table = existing.find((t) => t.name === definition.name);
    return table ? compare(definition, table) : { definition, ...noChanges() };
  });
}

/** Why the plan deletes data, one line per table; empty when it deletes none. */
export function destructiveChanges(plan: TableMigration[]): string[] {
  return plan.flatMap(({ definition, removed, retyped }) => {
    const parts = [
      ...(removed.length ? [`removes column${removed.length > 1 ? 's' : ''} ${list(removed)}`] : []),
      ...retyped.map((r) => `changes the type of column ${r.name} (${r.from} → ${r.to})`),
    ];
    const their = removed.length + retyped.length > 1 ? 'their' : 'its';
    return parts.length
      ? [`table ${definition.name}: the package ${parts.join(' and ')}: ${their} values would be deleted`]
      : [];
  });
}

/** Creates the missing tables and migrates the others, as the bot; prints a line for each table. */
export async function applyTables(api: TablesClient, plan: TableMigration[]): Promise<void> {
  for (const migration of plan) {
    const { definition, existing, update } = migration;
    const { name, schema, keyColumn, tags, factor } = definition;
    let done: string;
    if (!existing) {
      const created = await api.getOrCreateTable({
        table: name,
        schema,
        ...(keyColumn !== undefined && { keyColumn }),
        ...(tags !== undefined && { tags }),
        ...(factor !== undefined && { factor }),
      });
      const columns = Object.keys(columnSchemas(created.table)).length;
      done = created.created ? `created with ${columns} column${columns === 1 ? '' : 's'}` : 'already there';
    } else if (update) {
      await api.updateTable({ ...update, table: name });
      done = describe(migration);
    } else {
      done = 'unchanged';
    }
    const notes = migration.notes.length ? ` (${migration.notes.join('; ')})` : '';
    process.stdout.write(`Table ${name}: ${done}${notes}\n`);
  }
}

function describe({ added, changed, removed, retyped, settings }: TableMigration): string {
  return [
    ...(added.length ? [`added ${list(added)}`] : []),
    ...(changed.length ? [`updated ${list(changed)}`] : []),
    ...(removed.length ? [`removed ${list(removed)}`] : []),
    ...(retyped.length ? [`emptied ${list(retyped.map((r) => `${r.name} (${r.from} → ${r.to})`))}`] : []),
    ...settings,
  ].join('; ');
}
