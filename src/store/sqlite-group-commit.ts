/**
 * Kysely's SQLite driver, with group commit. SQLite has one writer, and on this one connection every
 * commit appends the pages it changed to the WAL: a chat message's few small transactions each paid for
 * a commit of their own, the largest cost of its SQL. Here the transactions (and the writes outside one)
 * that arrive while a commit is due share it: each runs alone on the connection, as before, inside a
 * savepoint of one open transaction, which is committed once the event loop has run what was ready.
 *
 * What holds, as with a commit each:
 * - a transaction's `execute` (or a write outside one) resolves only after the commit that made it
 *   durable, and a commit that fails fails every transaction it held (none was acknowledged);
 * - a transaction that fails rolls back to its savepoint: the others of its group are untouched;
 * - transactions run one at a time, each seeing what the ones before it wrote.
 * The transaction that opens a group needs no savepoint: undoing it is undoing the group, which holds
 * nothing else yet. The savepoints of the others are released four at a time, not one by one (the
 * commit ends those left; a rollback to one goes to the newest of its name, its own, as each runs alone).
 * A read outside a transaction runs at once and sees what the open group wrote: this process's own
 * writes, committed within the same turn of the event loop.
 */
import type SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { DatabaseConnection, Dialect, Driver, Kysely, QueryResult } from 'kysely';
import type { StatementRunner } from './sqlite-functions.ts';

/** Statements kept prepared: enough for every query Parley makes, which are few distinct texts. */
const PREPARED_STATEMENTS = 1000;

/**
 * The savepoints the transactions of a group run in: the bottom one of the stack, then the others above
 * it (one at a time, so one name serves them; a rollback to it goes to the newest, its own).
 */
const BOTTOM_SAVEPOINT = 'parley_group_first';
const SAVEPOINT = 'parley_group_member';
/**
 * Savepoints left on the stack before they are released at once (the bottom one releases those above
 * it): SQLite keeps each page a savepoint may undo in a journal that it empties only when none is left,
 * and which spills to a file past 64 KiB.
 */
const STACKED_SAVEPOINTS = 4;

/** A FIFO lock: the connection is used by one transaction (or statement) at a time, in arrival order. */
class Lock {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

interface Group {
  committed: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function openGroup(): Group {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const committed = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A group whose members all rolled back has no one waiting on it.
  committed.catch(() => undefined);
  return { committed, resolve, reject };
}

/** One use of the connection, from its acquisition to its release. */
class Handle implements DatabaseConnection {
  /** Between the begin and the commit (or rollback) of a transaction. */
  inTransaction = false;
  /** Gave the lock up before its release: it waits for its group's commit. */
  gaveUp = false;
  /** The group its transaction opened (its rollback is the group's), if it opened one. */
  opened: Group | undefined;
  /** The savepoint its transaction runs in, if it did not open its group. */
  savepoint: string | undefined;

  constructor(private readonly driver: GroupCommitDriver) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, compiledQuery);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries is not supported on SQLite');
  }
}

/** Kysely hands back the connections the driver gave it. */
function handleOf(connection: DatabaseConnection): Handle {
  if (!(connection instanceof Handle)) throw new Error('not a connection of this driver');
  return connection;
}

class GroupCommitDriver implements Driver {
  private readonly lock = new Lock();
  /** Handles are reused: Kysely wraps each new one for its log. */
  private readonly idle: Handle[] = [];
  /** The open transaction that the next commit ends, if one is open. */
  private group: Group | undefined;
  /** Savepoints on the open transaction's stack (see STACKED_SAVEPOINTS). */
  private stacked = 0;
  /**
   * Statements by text, prepared once: preparing each query again cost more than running it (a profile),
   * and Parley's queries are a small set of texts (values are bound). One statement runs at a time here.
   */
  private readonly statements = new Map<string, SqliteDatabase.Statement>();

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly onStatement: (sql: string) => void,
    private readonly runStatement: StatementRunner,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    const handle = this.idle.pop() ?? new Handle(this);
    handle.inTransaction = false;
    handle.gaveUp = false;
    handle.opened = undefined;
    handle.savepoint = undefined;
    return handle;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const handle = handleOf(connection);
    if (!handle.gaveUp) this.lock.release();
    this.idle.push(handle);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const handle = handleOf(connection);
    await this.holdLock(handle);
    const opened = this.joinGroup();
    handle.opened = opened;
    handle.inTransaction = true;
    if (opened) return;
    handle.savepoint = this.stacked === 0 ? BOTTOM_SAVEPOINT : SAVEPOINT;
    this.stacked++;
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${handle.savepoint}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const handle = handleOf(connection);
    if (this.stacked >= STACKED_SAVEPOINTS && handle.savepoint !== undefined) {
      await connection.executeQuery(CompiledQuery.raw(`release ${BOTTOM_SAVEPOINT}`));
      this.stacked = 0;
    }
    handle.inTransaction = false;
    handle.opened = undefined;
    handle.savepoint = undefined;
    await this.untilCommitted(handle);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const handle = handleOf(connection);
    // Kysely rolls back after a failed commit too: the lock was given up then, and the group's own
    // rollback undid its work. Touching the transaction now would be another's.
    if (!handle.inTransaction) return;
    const { opened } = handle;
    if (opened) {
      // It held the lock since it opened the group: nothing else is in it (unless SQLite ended it).
      if (this.group === opened) {
        this.group = undefined;
        if (this.database.inTransaction) this.own('rollback');
        opened.reject(new Error('the transaction that opened the group rolled back'));
      }
    } else if (handle.savepoint !== undefined) {
      await connection.executeQuery(CompiledQuery.raw(`rollback to ${handle.savepoint}`));
      await connection.executeQuery(CompiledQuery.raw(`release ${handle.savepoint}`));
      this.stacked = handle.savepoint === BOTTOM_SAVEPOINT ? 0 : this.stacked - 1;
    }
    handle.inTransaction = false;
    handle.opened = undefined;
    handle.savepoint = undefined;
  }

  async destroy(): Promise<void> {
    // What is still open is committed before the database closes.
    await this.group?.committed.catch(() => undefined);
    this.database.close();
  }

  execute<R>(handle: Handle, compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (handle.gaveUp) return this.holdLock(handle).then(() => this.execute<R>(handle, compiledQuery));
    const statement = this.prepared(compiledQuery.sql);
    const alone = !handle.inTransaction && !statement.readonly;
    if (alone) this.joinGroup();
    let result: QueryResult<R>;
    try {
      result = this.runStatement(compiledQuery.sql, () => run<R>(statement, compiledQuery.parameters));
    } catch (error) {
      this.checkGroup();
      throw error;
    }
    // A write outside a transaction is acknowledged, like a transaction, once its group is committed.
    return alone ? this.untilCommitted(handle).then(() => result) : Promise.resolve(result);
  }

  private prepared(sql: string): SqliteDatabase.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= PREPARED_STATEMENTS) this.statements.clear();
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Makes sure a group is open, with its commit scheduled, for what the holder of the lock writes next:
   * the group, when this call opened it.
   */
  private joinGroup(): Group | undefined {
    this.checkGroup();
    if (this.group) return undefined;
    // Immediate: the write lock is taken (or waited for, up to the busy timeout) at once. A deferred
    // transaction that read first could not take it later once another process (the CLI's `parley
    // member add`, a backup) had written since its read: SQLite answers "database is locked" at once then,
    // and the request failed.
    this.own('begin immediate');
    const group = openGroup();
    this.group = group;
    this.stacked = 0;
    // After the callbacks the event loop has ready: the transactions they start join this group.
    setImmediate(() => void this.commitGroup());
    return group;
  }

  /**
   * Some errors (a full disk, an I/O error) make SQLite roll the whole transaction back: the group is
   * lost, and its members are told, before anything joins a transaction that no longer exists.
   */
  private checkGroup(): void {
    if (!this.group || this.database.inTransaction) return;
    this.group.reject(new Error('the transaction was rolled back by the database'));
    this.group = undefined;
  }

  /** A connection reserved for several statements gave the lock up after a write: it takes it again. */
  private async holdLock(handle: Handle): Promise<void> {
    if (!handle.gaveUp) return;
    await this.lock.acquire();
    handle.gaveUp = false;
  }

  /** Gives up the lock, so that others may join the group, and waits for the group's commit. */
  private async untilCommitted(handle: Handle): Promise<void> {
    const group = this.group;
    handle.gaveUp = true;
    this.lock.release();
    if (group) await group.committed;
  }

  private async commitGroup(): Promise<void> {
    await this.lock.acquire();
    const group = this.group;
    this.group = undefined;
    try {
      if (!group) return;
      try {
        this.own('commit');
        group.resolve();
      } catch (error) {
        if (this.database.inTransaction) this.own('rollback');
        group.reject(error);
      }
    } finally {
      this.lock.release();
    }
  }

  /** The driver's own statements (begin, commit, rollback), told to the store's log like the others. */
  private own(statement: 'begin immediate' | 'commit' | 'rollback'): void {
    this.prepared(statement).run();
    this.onStatement(statement);
  }
}

function run<R>(statement: SqliteDatabase.Statement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** Kysely's SQLite dialect, on the group-committing driver. */
export class GroupCommitSqliteDialect implements Dialect {
  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly onStatement: (sql: string) => void = () => undefined,
    /** How each statement runs (src/store/sqlite-functions.ts watches those that match regexes). */
    private readonly runStatement: StatementRunner = (_sql, run) => run(),
  ) {}

  createDriver(): Driver {
    return new GroupCommitDriver(this.database, this.onStatement, this.runStatement);
  }

  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }

  createAdapter() {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}
