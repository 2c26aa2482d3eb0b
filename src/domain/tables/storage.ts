import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Executor, StoreSql, ValueKind } from '../../store/index.ts';
import { ROW_TABLE_PREFIX } from '../../store/schema.ts';
import { isScalar, sqlColumn } from './columns.ts';
import type { Column, ColumnType } from './columns.ts';

/** `name = value, ...` of an UPDATE, from SQL column names to their values. */
export function assignments(values: Map<string, unknown>): RawBuilder<unknown> {
  return sql.join([...values].map(([name, value]) => sql`${sql.id(name)} = ${value}`));
}

/** The SQL columns every row table has besides its columns'. */
export const SYSTEM_SQL_COLUMNS = ['id', 'created_at', 'updated_at', 'stale', 'computed', 'compute_due'];

/** The SQL table of a new table's rows, from its id (`table_01J…` → `tbl_rows_01j…`). */
export function rowTableName(tableId: string): string {
  return `${ROW_TABLE_PREFIX}${tableId.slice(tableId.indexOf('_') + 1).toLowerCase()}`;
}

/**
 * What each column type's values are to SQL. Text is compared by code point on every store, so that a
 * filter or an order answers the same rows whichever store runs it; dates are ISO 8601 texts.
 */
const VALUE_KINDS: Record<ColumnType, ValueKind> = {
  string: 'text',
  number: 'number',
  boolean: 'boolean',
  date: 'text',
  object: 'json',
  array: 'json',
};

/** What a column of `type` holds, as the store's SQL takes it. */
export const valueKind = (type: ColumnType): ValueKind => VALUE_KINDS[type];

const indexName = (table: string, column: Column, unique: boolean) =>
  `${table}_${sqlColumn(column)}${unique ? '_key' : ''}`;

/**
 * The DDL of row tables: a table of rows per Parley table, a typed SQL column per column, an index
 * per scalar column (a unique one for the key column). Runs in the caller's transaction (both stores'
 * DDL is transactional), with the change to the table's record.
 */
export class RowStorage {
  constructor(private readonly storeSql: StoreSql) {}

  private columnDefinition(column: Column): RawBuilder<unknown> {
    return sql`${sql.id(sqlColumn(column))} ${sql.raw(this.storeSql.columnType(valueKind(column.type)))}`;
  }

  async create(db: Executor, table: string, columns: Column[], keyColumn: string | null): Promise<void> {
    const definitions = [
      this.storeSql.idColumn,
      sql`created_at text not null`,
      sql`updated_at text not null`,
      // Computed columns' state: the stale ones (JSON list), each one's status (JSON map), and whether
      // code has columns to compute (what the compute worker looks for).
      sql`stale text`,
      sql`computed text`,
      sql`compute_due integer not null default 0`,
      ...columns.map((c) => this.columnDefinition(c)),
    ];
    await sql`create table ${sql.id(table)} (${sql.join(definitions)})`.execute(db);
    await sql`create index ${sql.id(`${table}_compute_due`)} on ${sql.id(table)} (compute_due)`.execute(db);
    for (const column of columns) await this.index(db, table, column, column.name === keyColumn);
  }

  async drop(db: Executor, table: string): Promise<void> {
    await sql`drop table if exists ${sql.id(table)}`.execute(db);
  }

  async addColumn(db: Executor, table: string, column: Column): Promise<void> {
    await sql`alter table ${sql.id(table)} add column ${this.columnDefinition(column)}`.execute(db);
    await this.index(db, table, column, false);
  }

  async dropColumn(db: Executor, table: string, column: Column): Promise<void> {
    // SQLite refuses to drop an indexed column: its indexes go first.
    await this.dropIndexes(db, table, column);
    await sql`alter table ${sql.id(table)} drop column ${sql.id(sqlColumn(column))}`.execute(db);
  }

  /** The key column changes: its unique index moves (fails on duplicate values: the caller reports it). */
  async moveKey(
    db: Executor,
    table: string,
    from: Column | undefined,
    to: Column | undefined,
  ): Promise<void> {
    if (from) {
      await this.dropIndexes(db, table, from);
      await this.index(db, table, from, false);
    }
    if (to) {
      await this.dropIndexes(db, table, to);
      await this.index(db, table, to, true);
    }
  }

  /** Copies every row of one row table into another of the same columns, ids included. */
  async copyRows(db: Executor, from: string, to: string, columns: Column[]): Promise<void> {
    const names = sql.join([...SYSTEM_SQL_COLUMNS, ...columns.map(sqlColumn)].map((n) => sql.id(n)));
    await sql`insert into ${sql.id(to)} (${names}) select ${names} from ${sql.id(from)}`.execute(db);
    await this.storeSql.idsCopied(db, to);
  }

  /** Row tables without a table record (a deleted bot's): their names. */
  async orphans(db: Executor): Promise<string[]> {
    const pattern = `${ROW_TABLE_PREFIX}%`;
    const { rows } = await sql<{ name: string }>`
      select t.name from (${this.storeSql.tableNames}) t
      where t.name like ${pattern} and t.name not in (select storage from tables)`.execute(db);
    return rows.map((r) => r.name);
  }

  private async index(db: Executor, table: string, column: Column, unique: boolean): Promise<void> {
    if (!isScalar(column.type) && !unique) return;
    const name = sql.id(indexName(table, column, unique));
    const on = sql`${sql.id(table)} (${sql.id(sqlColumn(column))})`;
    await (unique ? sql`create unique index ${name} on ${on}` : sql`create index ${name} on ${on}`).execute(
      db,
    );
  }

  private async dropIndexes(db: Executor, table: string, column: Column): Promise<void> {
    for (const unique of [false, true]) {
      await sql`drop index if exists ${sql.id(indexName(table, column, unique))}`.execute(db);
    }
  }
}
