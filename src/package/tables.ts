import { ApiError } from '../domain/shared/errors.ts';
import { checkColumnCount, columnFrom, isScalar, schemaEntries } from '../domain/tables/columns.ts';
import type { Column } from '../domain/tables/columns.ts';
import type { TableCard } from './cards.ts';
import type { LoadedJson } from './json-document.ts';
import { TABLE_NAME } from './format.ts';
import type { CompiledPackage, TableDefinition } from './format.ts';
import type { Problem } from './problems.ts';
import { pointer } from './problems.ts';

/** Columns every row has: filters and orderBy may name them. */
const SYSTEM_COLUMNS = ['id', 'createdAt', 'updatedAt'];

/** A table of the package: its file name, its table name and, when its schema is sound, its columns. */
export interface PackageTable {
  file: string;
  name: string;
  columns?: Column[];
}

/** The tables of a package by file name, with their names resolved (the file's name by default). */
export type PackageTables = NonNullable<CompiledPackage['tables']>;

/**
 * The package table a card's `table` names (by file name, else by table name), or undefined: then it
 * is a table made through the API, by name or id.
 */
export function findPackageTable<T extends { name: string }>(
  tables: Record<string, T> | Map<string, T> | undefined,
  ref: string,
): T | undefined {
  const all = tables instanceof Map ? tables : new Map(Object.entries(tables ?? {}));
  return all.get(ref) ?? [...all.values()].find((t) => t.name === ref);
}

/**
 * The columns a table definition's schema gives, as the Tables API reads it (a JSON Schema or an
 * example row): the sound ones, the names of all, and the problems of each column it would refuse.
 */
export function columnsOf(schema: unknown): {
  columns: Column[];
  names: string[];
  problems: [string, string][];
} {
  let entries: Record<string, unknown>;
  let schemaOnly: boolean;
  try {
    ({ entries, schemaOnly } = schemaEntries(schema));
  } catch (err) {
    return { columns: [], names: [], problems: [[pointer('schema'), messageOf(err)]] };
  }
  const required = (schema as { required?: unknown }).required;
  const where = (name: string) =>
    schemaOnly ? pointer('schema', 'properties', name) : pointer('schema', name);
  const columns: Column[] = [];
  const problems: [string, string][] = [];
  for (const [position, [name, definition]] of Object.entries(entries).entries()) {
    try {
      const column = columnFrom(name, definition, position, schemaOnly);
      columns.push(
        Array.isArray(required) && required.includes(name) ? { ...column, nullable: false } : column,
      );
    } catch (err) {
      problems.push([where(name), messageOf(err)]);
    }
  }
  try {
    checkColumnCount(Object.keys(entries).length);
  } catch (err) {
    problems.push([pointer('schema'), messageOf(err)]);
  }
  return { columns, names: Object.keys(entries), problems };
}

function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  throw err;
}

/**
 * tables/<name>.json: a sound schema, a key column that can be one, and one file per table name.
 * Answers the tables by file name, with their columns when their schemas are sound.
 */
export function checkTables(
  tables: Map<string, LoadedJson<TableDefinition> | undefined>,
  problems: Problem[],
): Map<string, PackageTable> {
  const checked = new Map<string, PackageTable>();
  const byName = new Map<string, string>();
  for (const [file, loaded] of tables) {
    if (!loaded) continue;
    const { doc, value } = loaded;
    const name = value.name ?? file;
    if (value.name === undefined && !TABLE_NAME.test(file)) {
      problems.push(
        doc.problem(
          '',
          `"${file}" is not a valid table name (letters, digits and _, starting with a letter or _, at most 50): give the table a "name"`,
        ),
      );
    }
    const other = byName.get(name);
    if (other !== undefined) {
      problems.push(
        doc.problem(
          value.name === undefined ? '' : pointer('name'),
          `tables/${other}.json declares table ${name} too`,
        ),
      );
    }
    byName.set(name, file);
    const found = columnsOf(value.schema);
    problems.push(...found.problems.map(([field, message]) => doc.problem(field, message)));
    const key = value.keyColumn;
    const keyColumn = found.columns.find((c) => c.name === key);
    if (key !== undefined && key !== 'id' && !found.names.includes(key)) {
      problems.push(doc.problem(pointer('keyColumn'), `"${key}" is not a column of the table`));
    } else if (keyColumn && !isScalar(keyColumn.type)) {
      problems.push(
        doc.problem(
          pointer('keyColumn'),
          `"${key}" is an ${keyColumn.type} column: a key column is a string, number, boolean or date column`,
        ),
      );
    }
    checked.set(file, { file, name, ...(found.problems.length === 0 && { columns: found.columns }) });
  }
  return checked;
}

/** The problems of a table card that names a package table: columns it does not have. */
export function checkTableCard(
  card: TableCard,
  at: (...rest: (string | number)[]) => string,
  tables: Map<string, PackageTable>,
  problem: (field: string, message: string, key?: boolean) => void,
): void {
  const table = findPackageTable(tables, card.table);
  if (!table?.columns) return;
  const names = new Set(table.columns.map((c) => c.name));
  const missing = (column: string) =>
    `no column "${column}" in table ${table.name} (tables/${table.file}.json)`;
  const isColumn = (field: string) => names.has(field) || SYSTEM_COLUMNS.includes(field);
  const rowKeys = (field: string, row: unknown, allowed: (key: string) => boolean) => {
    if (!isPlainObject(row)) return;
    for (const key of Object.keys(row)) if (!allowed(key)) problem(at(field, key), missing(key), true);
  };
  const filterKeys = (filter: unknown, path: (string | number)[]) => {
    if (!isPlainObject(filter)) return;
    for (const [key, value] of Object.entries(filter)) {
      if (key === '$and' || key === '$or') {
        if (Array.isArray(value)) value.forEach((f, i) => filterKeys(f, [...path, key, i]));
      } else if (key === '$not') {
        filterKeys(value, [...path, key]);
      } else if (!key.startsWith('$') && !isColumn(key.split('.')[0] ?? key)) {
        problem(at(...path, key), missing(key.split('.')[0] ?? key), true);
      }
    }
  };
  switch (card.type) {
    case 'tableFind':
      filterKeys(card.filter, ['filter']);
      if (card.orderBy !== undefined && !isColumn(card.orderBy))
        problem(at('orderBy'), missing(card.orderBy));
      break;
    case 'tableDelete':
      filterKeys(card.filter, ['filter']);
      break;
    case 'tableInsert':
      rowKeys('row', card.row, (key) => names.has(key));
      break;
    case 'tableUpdate':
      rowKeys('values', card.values, (key) => names.has(key));
      break;
    case 'tableUpsert':
      rowKeys('row', card.row, (key) => names.has(key) || key === 'id');
      if (card.keyColumn !== undefined && card.keyColumn !== 'id' && !names.has(card.keyColumn))
        problem(at('keyColumn'), missing(card.keyColumn));
      break;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
