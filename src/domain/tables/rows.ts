import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Executor, Store, ValueKind } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/errors.ts';
import { ApiError, notFound } from '../shared/errors.ts';
import type { JsonObject } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';
import type { BotActor } from '../workspace/actors.ts';
import { sqlColumn } from './columns.ts';
import { FilterCompiler, filterFailure } from './filter.ts';
import { computedOf, isRunnable, staleAfter, staleState } from './computed.ts';
import type { ColumnComputer } from './computed.ts';
import { rowView, tableRecord } from './record.ts';
import type { StoredRow, TableRecord, TableRow } from './record.ts';
import { TableSearch } from './search.ts';
import { assignments, valueKind } from './storage.ts';
import type { Tables } from './tables.ts';
import { storedValue, writtenRow } from './values.ts';
import type { SqlValue } from './values.ts';
import { ROW_BYTES_PER_FACTOR, MAX_ROWS_PER_CALL } from './limits.ts';

/** What a write answers besides its rows: what was ignored, and the rows refused (partial success). */
export interface WriteReport {
  warnings?: string[];
  errors?: string[];
}

/** One call's rows, checked: the ones to write and the report of the others. */
interface CheckedRows<T> {
  accepted: { index: number; values: Map<string, SqlValue>; input: T }[];
  errors: string[];
  unknown: Set<string>;
}

const report = (checked: { errors: string[]; unknown: Set<string> }): WriteReport => ({
  ...(checked.unknown.size > 0 && {
    warnings: [`Ignored keys that are no column of the table: ${[...checked.unknown].join(', ')}`],
  }),
  ...(checked.errors.length > 0 && { errors: checked.errors }),
});

/** Another call wrote the same key value between this call's check and its write: nothing is written. */
function keyRace(err: unknown): never {
  if (isUniqueViolation(err)) {
    throw new ApiError(
      'AlreadyExists',
      'A row with the same key column value was written meanwhile; nothing was written',
    );
  }
  throw err;
}

/** A bot's rows: writes (create, update, upsert, delete) and reads by id. Queries are in find.ts. */
export class TableRows {
  constructor(
    private readonly store: Store,
    private readonly tables: Tables,
    private readonly search: TableSearch,
  ) {}

  private computer: ColumnComputer | undefined;

  /** The engine computes columns with bot code: without it (the CLI's domain), they stay stale. */
  useComputer(computer: ColumnComputer): void {
    this.computer = computer;
  }

  async get(actor: BotActor, ref: string, id: number): Promise<TableRow> {
    const table = await this.tables.require(this.store.db, actor, ref);
    const [row] = await this.select(this.store.db, table, [id]);
    if (!row) throw notFound('Row', String(id));
    return row;
  }

  async create(
    actor: BotActor,
    ref: string,
    rows: JsonObject[],
    waitComputed = false,
  ): Promise<WriteReport & { rows: TableRow[] }> {
    const { table, ...written } = await this.store.db.transaction().execute(async (trx) => {
      const table = await this.tables.require(trx, actor, ref);
      const checked = this.check(table, rows, false);
      await this.refuseTakenKeys(trx, table, checked);
      const created = await this.insert(
        trx,
        table,
        checked.accepted.map((r) => r.values),
      );
      await this.search.put(trx, table, created);
      return { table, rows: created, ...report(checked) };
    });
    return { ...written, rows: await this.settle(actor, table, written.rows, waitComputed) };
  }

  async update(
    actor: BotActor,
    ref: string,
    rows: (JsonObject & { id: number })[],
    waitComputed = false,
  ): Promise<WriteReport & { rows: TableRow[] }> {
    const { table, ...written } = await this.store.db.transaction().execute(async (trx) => {
      const table = await this.tables.require(trx, actor, ref);
      const checked = this.check(table, rows, true);
      await this.refuseTakenKeys(trx, table, checked);
      const updated: TableRow[] = [];
      const ids = new Set<number>();
      const updates = checked.accepted.filter(({ index, input }) => {
        if (ids.has(input.id)) {
          checked.errors.push(`Row ${index}: another row of this call has id ${input.id}`);
          return false;
        }
        ids.add(input.id);
        return true;
      });
      const found = new Map(
        (
          await this.updateMany(
            trx,
            table,
            updates.map((u) => ({ id: u.input.id, values: u.values })),
          )
        ).map((r) => [r.id, r]),
      );
      for (const { index, input } of updates) {
        const row = found.get(input.id);
        if (row) updated.push(row);
        else checked.errors.push(`Row ${index}: no row has id ${input.id}`);
      }
      await this.search.put(trx, table, updated);
      return { table, rows: updated, ...report(checked) };
    });
    return { ...written, rows: await this.settle(actor, table, written.rows, waitComputed) };
  }

  /** Updates the rows whose key matches, inserts the others. */
  async upsert(
    actor: BotActor,
    ref: string,
    rows: JsonObject[],
    keyColumn = 'id',
    waitComputed = false,
  ): Promise<WriteReport & { inserted: TableRow[]; updated: TableRow[] }> {
    const { table, ...written } = await this.store.db.transaction().execute(async (trx) => {
      const table = await this.tables.require(trx, actor, ref);
      const checked = this.check(table, rows, true);
      const key = keyColumn === 'id' ? undefined : table.columns.find((c) => c.name === keyColumn);
      if (keyColumn !== 'id' && !key) {
        throw new ApiError(
          'InvalidPayload',
          `keyColumn "${keyColumn}" is no column of table "${table.name}"`,
        );
      }
      const sqlKey = key ? sqlColumn(key) : 'id';
      // The stored form of each row's key: what the existing rows are looked up by.
      const keyOf = (input: JsonObject): SqlValue | undefined => {
        const given = input[keyColumn];
        if (given === undefined || given === null) return undefined;
        if (!key) return typeof given === 'number' ? given : undefined;
        const stored = storedValue(this.store.sql, key.type, given);
        return 'problem' in stored ? undefined : stored.value;
      };
      const keys = [...new Set(checked.accepted.map((r) => keyOf(r.input)).filter((k) => k !== undefined))];
      const existing = new Map<SqlValue, number[]>();
      for (let i = 0; i < keys.length; i += MAX_ROWS_PER_CALL) {
        const { rows: found } = await sql<{ id: number; key: SqlValue }>`
          select id, ${sql.id(sqlKey)} as key from ${sql.id(table.storage)}
          where ${sql.id(sqlKey)} in (${sql.join(keys.slice(i, i + MAX_ROWS_PER_CALL))})`.execute(trx);
        for (const row of found) existing.set(row.key, [...(existing.get(row.key) ?? []), Number(row.id)]);
      }
      const seen = new Set<SqlValue>();
      const toInsert: Map<string, SqlValue>[] = [];
      const toUpdate: { id: number; values: Map<string, SqlValue> }[] = [];
      for (const { index, values, input } of checked.accepted) {
        const value = keyOf(input);
        if (value !== undefined && seen.has(value)) {
          checked.errors.push(`Row ${index}: another row of this call has the same ${keyColumn}`);
          continue;
        }
        if (value !== undefined) seen.add(value);
        const ids = value === undefined ? [] : (existing.get(value) ?? []);
        if (ids.length > 1) {
          checked.errors.push(`Row ${index}: ${ids.length} rows have this ${keyColumn}; it must name one`);
          continue;
        }
        const [id] = ids;
        if (id === undefined) {
          // A new row: every column it does not give is null.
          toInsert.push(this.complete(table, values));
          continue;
        }
        toUpdate.push({ id, values });
      }
      const updated = await this.updateMany(trx, table, toUpdate);
      const inserted = await this.insert(trx, table, toInsert);
      await this.search.put(trx, table, [...inserted, ...updated]);
      return { table, inserted, updated, ...report(checked) };
    });
    return {
      ...written,
      inserted: await this.settle(actor, table, written.inserted, waitComputed),
      updated: await this.settle(actor, table, written.updated, waitComputed),
    };
  }

  async deleteByIds(actor: BotActor, ref: string, ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.deleteRows(actor, ref, () => sql<SqlBool>`id in (${sql.join(ids)})`);
  }

  async deleteWhere(actor: BotActor, ref: string, filter: unknown): Promise<number> {
    try {
      return await this.deleteRows(actor, ref, (table) =>
        new FilterCompiler(this.store.sql, table.columns).compile(filter),
      );
    } catch (err) {
      throw filterFailure(err);
    }
  }

  async deleteAll(actor: BotActor, ref: string): Promise<number> {
    return this.deleteRows(actor, ref, () => sql<SqlBool>`1 = 1`);
  }

  /** Deletes the rows a condition selects, and their search entries, in one transaction. */
  private async deleteRows(
    actor: BotActor,
    ref: string,
    condition: (table: TableRecord) => RawBuilder<SqlBool>,
  ): Promise<number> {
    return this.store.db.transaction().execute(async (trx) => {
      const table = await this.tables.require(trx, actor, ref);
      const { rows } = await sql<{ id: number }>`
        delete from ${sql.id(table.storage)} where ${condition(table)} returning id`.execute(trx);
      await this.search.remove(
        trx,
        table,
        rows.map((r) => Number(r.id)),
      );
      return rows.length;
    });
  }

  /** Rows written as they are (an import, a copy): checked like any write; answers the report. */
  async insertChecked(
    db: Executor,
    table: TableRecord,
    rows: JsonObject[],
    offset = 0,
  ): Promise<{ written: number; report: WriteReport }> {
    const checked = this.check(table, rows, false, offset);
    await this.refuseTakenKeys(db, table, checked);
    // The rows come back only to be indexed for search, when the table has searchable columns.
    const inserted = await this.insert(
      db,
      table,
      checked.accepted.map((r) => r.values),
      TableSearch.searchable(table),
    );
    await this.search.put(db, table, inserted);
    return { written: checked.accepted.length, report: report(checked) };
  }

  private check<T extends JsonObject>(
    table: TableRecord,
    rows: T[],
    partial: boolean,
    offset = 0,
  ): CheckedRows<T> {
    const limit = ROW_BYTES_PER_FACTOR * table.factor;
    const checked: CheckedRows<T> = { accepted: [], errors: [], unknown: new Set() };
    rows.forEach((input, i) => {
      const index = i + offset;
      const size = Buffer.byteLength(JSON.stringify(input));
      if (size > limit) {
        throw new ApiError(
          'LimitExceeded',
          `Row ${index} has ${size} bytes; rows of table "${table.name}" have at most ${limit} (4 KB × factor ${table.factor})`,
        );
      }
      const written = writtenRow(this.store.sql, table.columns, input, partial);
      if ('problem' in written) {
        checked.errors.push(`Row ${index}: ${written.problem}`);
        return;
      }
      for (const key of written.unknown) checked.unknown.add(key);
      checked.accepted.push({ index, values: written.values, input });
    });
    return checked;
  }

  /** Rows that would give the key column a value it has already are refused (reported, not written). */
  private async refuseTakenKeys<T extends JsonObject>(
    db: Executor,
    table: TableRecord,
    checked: CheckedRows<T>,
  ): Promise<void> {
    const key = table.columns.find((c) => c.name === table.keyColumn);
    if (!key) return;
    const column = sqlColumn(key);
    const values = [
      ...new Set(
        checked.accepted.map((r) => r.values.get(column)).filter((v) => v !== undefined && v !== null),
      ),
    ];
    const taken = new Map<SqlValue, number>();
    for (let i = 0; i < values.length; i += MAX_ROWS_PER_CALL) {
      const { rows } = await sql<{ id: number; key: SqlValue }>`
        select id, ${sql.id(column)} as key from ${sql.id(table.storage)}
        where ${sql.id(column)} in (${sql.join(values.slice(i, i + MAX_ROWS_PER_CALL))})`.execute(db);
      for (const row of rows) taken.set(row.key, Number(row.id));
    }
    const inCall = new Set<SqlValue>();
    checked.accepted = checked.accepted.filter(({ index, values: row, input }) => {
      const value = row.get(column);
      if (value === undefined || value === null) return true;
      const owner = taken.get(value);
      const self = typeof input.id === 'number' ? input.id : undefined;
      if ((owner !== undefined && owner !== self) || inCall.has(value)) {
        checked.errors.push(`Row ${index}: key column "${key.name}" already has this value`);
        return false;
      }
      inCall.add(value);
      return true;
    });
  }

  /**
   * Rows just written, with their computed columns: computed now when the caller waits for them, or
   * left to the compute worker (woken) otherwise.
   */
  private async settle(
    actor: BotActor,
    table: TableRecord,
    rows: TableRow[],
    wait: boolean,
  ): Promise<TableRow[]> {
    this.store.sql.rowsWritten(this.store.db, table.storage, rows.length);
    if (table.codeColumns === 0 || rows.length === 0 || !this.computer) return rows;
    if (!wait) {
      this.computer.wake();
      return rows;
    }
    await this.computeRows(
      actor,
      table,
      rows.map((r) => r.id),
    );
    const fresh = new Map(
      (
        await this.select(
          this.store.db,
          table,
          rows.map((r) => r.id),
        )
      ).map((r) => [r.id, r]),
    );
    return rows.map((row) => fresh.get(row.id) ?? row);
  }

  /** Computes the due columns of some rows of tables whose columns code computes; answers how many rows. */
  async computeDue(limit = 50): Promise<number> {
    const tables = await this.store.db
      .selectFrom('tables')
      .selectAll()
      .where('code_columns', '>', 0)
      .where('compute_enabled', '=', 1)
      .execute();
    let done = 0;
    for (const row of tables) {
      const table = tableRecord(row);
      const { rows } = await sql<{ id: number }>`
        select id from ${sql.id(table.storage)} where compute_due = 1 order by id limit ${limit}`.execute(
        this.store.db,
      );
      if (rows.length === 0) continue;
      const actor = await this.tables.botActor(this.store.db, table.botId);
      if (!actor) continue;
      await this.computeRows(
        actor,
        table,
        rows.map((r) => Number(r.id)),
      );
      done += rows.length;
    }
    return done;
  }

  /**
   * Runs the due computed columns of rows and stores what they answer (or why they failed). The store
   * is conditional on the row being as it was read: a row written meanwhile is computed again.
   */
  private async computeRows(actor: BotActor, table: TableRecord, ids: number[]): Promise<void> {
    const computer = this.computer;
    if (!computer || ids.length === 0) return;
    for (const row of await this.select(this.store.db, table, ids)) {
      const due = table.columns.filter((c) => row.stale.includes(c.name) && isRunnable(table, c));
      const now = nowIso();
      const sets = new Map<string, SqlValue>();
      // Only the columns the table still computes keep a state (a removed one's is dropped).
      const computed: JsonObject = Object.fromEntries(
        Object.entries(row.computed).filter(([name]) =>
          table.columns.some((c) => c.name === name && computedOf(c)),
        ),
      );
      const outcomes = due.length > 0 ? await computer.compute(actor, table, row, due) : {};
      for (const column of due) {
        const outcome = outcomes[column.name] ?? { error: 'the code was not run' };
        const stored =
          'error' in outcome
            ? { problem: outcome.error }
            : outcome.value === null
              ? { value: null }
              : storedValue(this.store.sql, column.type, outcome.value);
        if ('problem' in stored) {
          const error = 'error' in outcome ? outcome.error : `the code's value ${stored.problem}`;
          computed[column.name] = { status: 'error', error, updatedAt: now };
          continue;
        }
        sets.set(sqlColumn(column), stored.value);
        computed[column.name] = { status: 'computed', updatedAt: now };
      }
      // Nothing left to compute (its columns were removed or stopped): the row is no longer due.
      const stale = row.stale.filter(
        (name) =>
          !due.some((c) => c.name === name) && table.columns.some((c) => c.name === name && computedOf(c)),
      );
      sets.set('stale', stale.length > 0 ? JSON.stringify(stale) : null);
      sets.set('computed', JSON.stringify(computed));
      sets.set('compute_due', 0);
      await sql`
        update ${sql.id(table.storage)} set ${assignments(sets)}
        where id = ${row.id} and updated_at = ${row.updatedAt}`.execute(this.store.db);
    }
  }

  private complete(table: TableRecord, values: Map<string, SqlValue>): Map<string, SqlValue> {
    const all = new Map<string, SqlValue>();
    for (const column of table.columns) all.set(sqlColumn(column), values.get(sqlColumn(column)) ?? null);
    return all;
  }

  private async insert(
    db: Executor,
    table: TableRecord,
    rows: Map<string, SqlValue>[],
    answer = true,
  ): Promise<TableRow[]> {
    if (rows.length === 0) return [];
    const names = table.columns.map(sqlColumn);
    const now = nowIso();
    // A new row: each computed column is stale.
    const state = staleState(table, staleAfter(table, 'all'));
    const tuples = rows.map(
      (values) =>
        sql`(${sql.join([
          now,
          now,
          state?.get('stale') ?? null,
          state?.get('computed') ?? null,
          state?.get('compute_due') ?? 0,
          ...names.map((n) => values.get(n) ?? null),
        ])})`,
    );
    const columns = sql.join(
      ['created_at', 'updated_at', 'stale', 'computed', 'compute_due', ...names].map((n) => sql.id(n)),
    );
    const statement = sql<StoredRow>`insert into ${sql.id(table.storage)} (${columns}) values ${sql.join(tuples)}${answer ? sql` returning *` : sql``}`;
    const { rows: stored } = await statement.execute(db).catch(keyRace);
    return stored.map((row) => rowView(table.columns, row)).sort((a, b) => a.id - b.id);
  }

  /**
   * Updates rows by id, answering those that exist. Rows that change the same columns are updated by
   * one statement (an UPDATE from a VALUES list); a table with computed columns marks each row's stale
   * ones, row by row.
   */
  private async updateMany(
    db: Executor,
    table: TableRecord,
    updates: { id: number; values: Map<string, SqlValue> }[],
  ): Promise<TableRow[]> {
    if (table.columns.some((c) => computedOf(c))) {
      const rows: TableRow[] = [];
      for (const { id, values } of updates) {
        const row = await this.updateOne(db, table, id, values);
        if (row) rows.push(row);
      }
      return rows;
    }
    const groups = new Map<string, typeof updates>();
    for (const update of updates) {
      const key = [...update.values.keys()].join(',');
      groups.set(key, [...(groups.get(key) ?? []), update]);
    }
    const storeSql = this.store.sql;
    const now = nowIso();
    const rows: TableRow[] = [];
    for (const group of groups.values()) {
      const names = [...(group[0]?.values.keys() ?? [])];
      const types = names.map((name) => table.columns.find((c) => sqlColumn(c) === name)?.type ?? 'string');
      // VALUES columns are column1 (the id), column2...
      const source = (n: number, kind: ValueKind) => storeSql.typed(sql`v.${sql.id(`column${n}`)}`, kind);
      const sets = [
        sql`updated_at = ${now}`,
        ...names.map((name, i) => sql`${sql.id(name)} = ${source(i + 2, valueKind(types[i] ?? 'string'))}`),
      ];
      const tuples = group.map(
        (u) => sql`(${sql.join([u.id, ...names.map((n) => u.values.get(n) ?? null)])})`,
      );
      const target = sql.id(table.storage);
      const { rows: stored } = await sql<StoredRow>`
        update ${target} set ${sql.join(sets)} from (values ${sql.join(tuples)}) as v
        where ${target}.id = ${source(1, 'integer')}
        returning ${storeSql.everyColumnOf(target)}`
        .execute(db)
        .catch(keyRace);
      rows.push(...stored.map((row) => rowView(table.columns, row)));
    }
    return rows.sort((a, b) => a.id - b.id);
  }

  private async updateOne(
    db: Executor,
    table: TableRecord,
    id: number,
    values: Map<string, SqlValue>,
  ): Promise<TableRow | undefined> {
    const sets = new Map<string, SqlValue>([['updated_at', nowIso()], ...values]);
    const { rows } = await sql<StoredRow>`
      update ${sql.id(table.storage)} set ${assignments(sets)} where id = ${id} returning *`
      .execute(db)
      .catch(keyRace);
    const [stored] = rows;
    const row = stored && rowView(table.columns, stored);
    const changed = new Set(table.columns.filter((c) => values.has(sqlColumn(c))).map((c) => c.name));
    const state = row && staleState(table, staleAfter(table, changed), row);
    if (!row || !state) return row;
    const { rows: marked } = await sql<StoredRow>`
      update ${sql.id(table.storage)} set ${assignments(state)}
      where id = ${id} returning *`.execute(db);
    return marked[0] && rowView(table.columns, marked[0]);
  }

  private async select(db: Executor, table: TableRecord, ids: number[]): Promise<TableRow[]> {
    const { rows } =
      await sql<StoredRow>`select * from ${sql.id(table.storage)} where id in (${sql.join(ids)})`.execute(db);
    return rows.map((row) => rowView(table.columns, row));
  }
}
