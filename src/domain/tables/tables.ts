import { sql } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import type { NewRow } from '../../store/schema.ts';
import { isUniqueViolation } from '../../store/errors.ts';
import {
  alreadyExists,
  ApiError,
  forbidden,
  invalidPayload,
  notFound,
  unlessMissing,
} from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { toJson, withoutNulls } from '../shared/json.ts';
import { withKeyLock } from '../shared/locks.ts';
import { nowIso } from '../shared/time.ts';
import type { BotActor } from '../workspace/actors.ts';
import {
  checkColumnCount,
  checkColumnName,
  columnFrom,
  columnsFrom,
  isScalar,
  isSearchable,
  schemaEntries,
} from './columns.ts';
import type { Column } from './columns.ts';
import { tableRecord, tableView } from './record.ts';
import type { Table, TableRecord } from './record.ts';
import { TableSearch } from './search.ts';
import { assignments, rowTableName, RowStorage } from './storage.ts';
import { checkConstraints } from './values.ts';
import { checkComputed, computedOf, staleAfter, staleState } from './computed.ts';
import { MAX_FACTOR, MAX_TABLES_PER_BOT, MAX_TABLE_NAME } from './limits.ts';

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface TableSettings {
  factor?: number | undefined;
  frozen?: boolean | undefined;
  keyColumn?: string | null | undefined;
  tags?: Record<string, string> | undefined;
  isComputeEnabled?: boolean | undefined;
}

export interface NewTable extends TableSettings {
  name: string;
  schema: unknown;
}

export interface TablePatch extends Omit<TableSettings, 'tags'> {
  name?: string | undefined;
  /** New columns, changed ones, and `null` for the ones to remove. */
  schema?: unknown;
  tags?: Record<string, string | null> | undefined;
}

/** A table with what the API's get answers beside it. */
export interface TableStatus {
  table: Table;
  rows: number;
  stale: number;
  indexing: number;
}

function checkName(name: string): void {
  if (name.length === 0 || name.length > MAX_TABLE_NAME || !TABLE_NAME.test(name)) {
    throw invalidPayload(
      `Table name "${name}" must be 1 to ${MAX_TABLE_NAME} letters, digits or "_", starting with a letter or "_"`,
    );
  }
}

function checkFactor(factor: number): void {
  if (!Number.isInteger(factor) || factor < 1 || factor > MAX_FACTOR) {
    throw invalidPayload(`factor must be a whole number from 1 to ${MAX_FACTOR}`);
  }
}

function keyColumnOf(columns: Column[], name: string | null): Column | undefined {
  if (name === null || name === 'id') return undefined;
  const column = columns.find((c) => c.name === name);
  if (!column) throw invalidPayload(`keyColumn "${name}" is no column of the table`);
  if (!isScalar(column.type))
    throw invalidPayload(`keyColumn "${name}" must be a string, number, boolean or date column`);
  return column;
}

/** What a table's search entries hold: its searchable columns (positions) and their types. */
const searchKey = (table: TableRecord) =>
  table.columns
    .filter(isSearchable)
    .map((c) => `${c.position}:${c.type}`)
    .join(',');

/** A bot's tables: their definitions, and the SQL tables of their rows (storage.ts). */
export class Tables {
  readonly storage: RowStorage;

  constructor(
    private readonly store: Store,
    private readonly search: TableSearch,
  ) {
    this.storage = new RowStorage(store.sql);
  }

  /** The bot's table `ref` names (its id or its name), or 404. */
  async require(db: Executor, actor: BotActor, ref: string): Promise<TableRecord> {
    const row = await db
      .selectFrom('tables')
      .selectAll()
      .where('bot_id', '=', actor.botId)
      .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
      .orderBy(sql`case when id = ${ref} then 0 else 1 end`)
      .executeTakeFirst();
    if (!row) throw notFound('Table', ref);
    return tableRecord(row);
  }

  async create(actor: BotActor, input: NewTable): Promise<Table> {
    checkName(input.name);
    return this.store.db
      .transaction()
      .execute(async (trx) => tableView(await this.insert(trx, actor, input)));
  }

  async get(actor: BotActor, ref: string): Promise<TableStatus> {
    return this.status(this.store.db, await this.require(this.store.db, actor, ref));
  }

  async getOrCreate(
    actor: BotActor,
    name: string,
    input: Omit<NewTable, 'name'>,
  ): Promise<TableStatus & { created: boolean }> {
    checkName(name);
    return withKeyLock(this.store, `tables:${actor.botId}`, undefined, async (trx) => {
      const existing = await unlessMissing(this.require(trx, actor, name));
      if (existing) return { ...(await this.status(trx, existing)), created: false };
      const created = await this.insert(trx, actor, { ...input, name });
      return { ...(await this.status(trx, created)), created: true };
    });
  }

  async list(actor: BotActor, tags: Record<string, string> = {}): Promise<Table[]> {
    const rows = await this.store.db
      .selectFrom('tables')
      .selectAll()
      .where('bot_id', '=', actor.botId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    // A bot has at most MAX_TABLES_PER_BOT tables: their tags are compared here.
    return rows
      .map(tableRecord)
      .filter((t) => Object.entries(tags).every(([key, value]) => t.tags[key] === value))
      .map(tableView);
  }

  async update(
    actor: BotActor,
    ref: string,
    patch: TablePatch,
  ): Promise<{ table: Table; staleColumns: string[] }> {
    return this.store.db.transaction().execute(async (trx) => {
      const table = await this.require(trx, actor, ref);
      const frozen = patch.frozen ?? table.frozen;
      if (
        frozen &&
        (patch.name !== undefined || patch.schema !== undefined || patch.keyColumn !== undefined)
      ) {
        throw forbidden(
          `Table "${table.name}" is frozen: unfreeze it (frozen: false) to change its name or schema`,
        );
      }
      if (patch.name !== undefined && patch.name !== table.name) {
        checkName(patch.name);
        await this.requireFreeName(trx, actor, patch.name);
      }
      if (patch.factor !== undefined) {
        checkFactor(patch.factor);
        if (patch.factor < table.factor) {
          throw invalidPayload(`factor can only grow: table "${table.name}" has factor ${table.factor}`);
        }
      }
      let columns = table.columns;
      let nextPosition = table.nextPosition;
      let keyColumn = patch.keyColumn === undefined ? table.keyColumn : patch.keyColumn;
      if (patch.schema !== undefined) {
        ({ columns, nextPosition } = await this.applySchemaPatch(trx, table, patch.schema));
        if (keyColumn !== null && keyColumn !== 'id' && !columns.some((c) => c.name === keyColumn))
          keyColumn = null;
      }
      if (patch.schema !== undefined || patch.keyColumn !== undefined) {
        const previous = table.columns.find((c) => c.name === table.keyColumn);
        const from = previous && columns.find((c) => c.position === previous.position);
        await this.storage
          .moveKey(trx, table.storage, from, keyColumnOf(columns, keyColumn))
          .catch((err: unknown) => {
            if (isUniqueViolation(err)) {
              throw invalidPayload(
                `Column "${keyColumn}" has the same value in several rows: it cannot be the key column`,
              );
            }
            throw err;
          });
      }
      const tags = patch.tags ? withoutNulls({ ...table.tags, ...patch.tags }) : table.tags;
      await trx
        .updateTable('tables')
        .set({
          name: patch.name ?? table.name,
          columns: toJson(columns),
          next_position: nextPosition,
          code_columns: checkComputed(columns),
          factor: patch.factor ?? table.factor,
          frozen: frozen ? 1 : 0,
          key_column: keyColumn,
          tags: toJson(tags),
          compute_enabled: (patch.isComputeEnabled ?? table.computeEnabled) ? 1 : 0,
          updated_at: nowIso(),
        })
        .where('id', '=', table.id)
        .execute();
      const updated = await this.require(trx, actor, table.id);
      if (searchKey(updated) !== searchKey(table)) await this.search.rebuild(trx, updated, table);
      return { table: tableView(updated), staleColumns: await this.restale(trx, table, updated) };
    });
  }

  async renameColumn(actor: BotActor, ref: string, name: string, newName: string): Promise<Table> {
    return this.store.db.transaction().execute(async (trx) => {
      const table = await this.require(trx, actor, ref);
      if (table.frozen) throw forbidden(`Table "${table.name}" is frozen: its columns cannot be renamed`);
      const column = table.columns.find((c) => c.name === name);
      if (!column) throw invalidPayload(`Table "${table.name}" has no column "${name}"`);
      checkColumnName(newName);
      if (table.columns.some((c) => c.name === newName)) {
        throw alreadyExists(`Table "${table.name}" already has a column "${newName}"`);
      }
      // The SQL column is named by position: only the definition changes.
      const columns = table.columns.map((c) => (c === column ? { ...c, name: newName } : c));
      await trx
        .updateTable('tables')
        .set({
          columns: toJson(columns),
          key_column: table.keyColumn === name ? newName : table.keyColumn,
          updated_at: nowIso(),
        })
        .where('id', '=', table.id)
        .execute();
      return tableView(await this.require(trx, actor, table.id));
    });
  }

  async delete(actor: BotActor, ref: string): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      const table = await this.require(trx, actor, ref);
      // Its search entries and vectors go with it.
      await this.search.drop(trx, table);
      await trx.deleteFrom('tables').where('id', '=', table.id).execute();
      await this.storage.drop(trx, table.storage);
    });
  }

  /** A copy of a table (its rows too, unless `schemaOnly`), under a new name. */
  async duplicate(
    actor: BotActor,
    ref: string,
    options: {
      tableName?: string | undefined;
      schemaOnly?: boolean | undefined;
      factor?: number | undefined;
    },
  ): Promise<{ table: Table; rows: number }> {
    return withKeyLock(this.store, `tables:${actor.botId}`, undefined, async (trx) => {
      const source = await this.require(trx, actor, ref);
      const name = options.tableName ?? (await this.freeCopyName(trx, actor, source.name));
      checkName(name);
      const copy = await this.insert(
        trx,
        actor,
        {
          name,
          schema: undefined,
          factor: options.factor ?? source.factor,
          keyColumn: source.keyColumn,
          tags: source.tags,
          isComputeEnabled: source.computeEnabled,
        },
        source.columns,
        source.nextPosition,
      );
      const { rows } = await this.status(trx, source);
      if (!options.schemaOnly) {
        await this.storage.copyRows(trx, source.storage, copy.storage, source.columns);
        if (TableSearch.searchable(copy)) await this.search.rebuild(trx, copy);
      }
      return { table: tableView(copy), rows };
    });
  }

  /** Drops the row tables whose table is gone (a deleted bot's): answers how many. */
  async dropOrphans(): Promise<number> {
    const orphans = await this.storage.orphans(this.store.db);
    for (const name of orphans) await this.storage.drop(this.store.db, name);
    return orphans.length;
  }

  /** How many rows a table has, and how many of them have a stale computed column. */
  async counts(db: Executor, table: TableRecord): Promise<{ rows: number; stale: number }> {
    const { rows } = await sql<{ n: number; stale: number }>`
      select count(*) as n, count(stale) as stale from ${sql.id(table.storage)}`.execute(db);
    const [counts] = rows;
    return { rows: Number(counts?.n ?? 0), stale: Number(counts?.stale ?? 0) };
  }

  /** The bot acting as itself (its work off any request: jobs, computed columns), if it still exists. */
  async botActor(db: Executor, botId: string): Promise<BotActor | undefined> {
    const bot = await db.selectFrom('bots').select('workspace_id').where('id', '=', botId).executeTakeFirst();
    return bot && { botId, workspaceId: bot.workspace_id };
  }

  private async status(db: Executor, table: TableRecord): Promise<TableStatus> {
    return { table: tableView(table), ...(await this.counts(db, table)), indexing: 0 };
  }

  /**
   * A computed column added or changed makes every row's computed columns stale (they are computed
   * again); answers the columns whose definition changed.
   */
  private async restale(db: Executor, before: TableRecord, after: TableRecord): Promise<string[]> {
    const definition = (table: TableRecord, name: string) => {
      const column = table.columns.find((c) => c.name === name);
      return column && JSON.stringify([column.type, computedOf(column)]);
    };
    const changed = after.columns
      .filter((c) => computedOf(c) && definition(after, c.name) !== definition(before, c.name))
      .map((c) => c.name);
    const state = changed.length > 0 ? staleState(after, staleAfter(after, 'all')) : undefined;
    if (!state) return [];
    await sql`update ${sql.id(after.storage)} set ${assignments(state)}`.execute(db);
    return changed;
  }

  private async nameTaken(db: Executor, actor: BotActor, name: string): Promise<boolean> {
    const row = await db
      .selectFrom('tables')
      .select('id')
      .where('bot_id', '=', actor.botId)
      .where('name', '=', name)
      .executeTakeFirst();
    return row !== undefined;
  }

  private async requireFreeName(db: Executor, actor: BotActor, name: string): Promise<void> {
    if (await this.nameTaken(db, actor, name))
      throw alreadyExists(`The bot already has a table named "${name}"`);
  }

  private async freeCopyName(db: Executor, actor: BotActor, name: string): Promise<string> {
    for (let n = 1; ; n++) {
      const candidate = `${name.slice(0, MAX_TABLE_NAME - 8)}Copy${n === 1 ? '' : n}`;
      if (!(await this.nameTaken(db, actor, candidate))) return candidate;
    }
  }

  private async insert(
    db: Executor,
    actor: BotActor,
    input: NewTable,
    givenColumns?: Column[],
    givenNextPosition?: number,
  ): Promise<TableRecord> {
    const columns = givenColumns ?? columnsFrom(input.schema);
    checkConstraints(columns);
    if (input.factor !== undefined) checkFactor(input.factor);
    const keyColumn = input.keyColumn ?? null;
    keyColumnOf(columns, keyColumn);
    await this.requireFreeName(db, actor, input.name);
    const { count } = await db
      .selectFrom('tables')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('bot_id', '=', actor.botId)
      .executeTakeFirstOrThrow();
    if (Number(count) >= MAX_TABLES_PER_BOT) {
      throw new ApiError('QuotaExceeded', `A bot has at most ${MAX_TABLES_PER_BOT} tables`);
    }
    const id = newId('table');
    const now = nowIso();
    const row: NewRow<'tables'> = {
      id,
      bot_id: actor.botId,
      name: input.name,
      columns: toJson(columns),
      factor: input.factor ?? 1,
      frozen: input.frozen ? 1 : 0,
      key_column: keyColumn,
      tags: toJson(input.tags ?? {}),
      compute_enabled: input.isComputeEnabled === false ? 0 : 1,
      storage: rowTableName(id),
      next_position: givenNextPosition ?? columns.length,
      code_columns: checkComputed(columns),
      created_at: now,
      updated_at: now,
    };
    await db
      .insertInto('tables')
      .values(row)
      .execute()
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw alreadyExists(`The bot already has a table named "${input.name}"`);
        throw err;
      });
    await this.storage.create(db, row.storage, columns, keyColumn);
    return tableRecord({ ...row, key_column: keyColumn, code_columns: row.code_columns ?? 0 });
  }

  private async applySchemaPatch(
    db: Executor,
    table: TableRecord,
    patch: unknown,
  ): Promise<{ columns: Column[]; nextPosition: number }> {
    const { entries, schemaOnly } = schemaEntries(patch);
    let columns = [...table.columns];
    let nextPosition = table.nextPosition;
    for (const [name, definition] of Object.entries(entries)) {
      const existing = columns.find((c) => c.name === name);
      if (definition === null) {
        if (!existing) continue;
        await this.storage.dropColumn(db, table.storage, existing);
        columns = columns.filter((c) => c !== existing);
        continue;
      }
      if (existing) {
        const changed = columnFrom(name, definition, existing.position, schemaOnly);
        if (changed.type !== existing.type) {
          // A new type: the old values go (they would not fit), as the hosted product does.
          await this.storage.dropColumn(db, table.storage, existing);
          await this.storage.addColumn(db, table.storage, changed);
        }
        columns = columns.map((c) => (c === existing ? changed : c));
        continue;
      }
      const added = columnFrom(name, definition, nextPosition++, schemaOnly);
      await this.storage.addColumn(db, table.storage, added);
      columns.push(added);
    }
    checkColumnCount(columns.length);
    checkConstraints(columns);
    return { columns, nextPosition };
  }
}
