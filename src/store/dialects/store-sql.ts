/**
 * What differs between the databases the store runs on, asked for by meaning: every difference the
 * domain's SQL meets is here, and nothing outside `store/` asks which database it is. Kysely writes the
 * queries built with its query builder for each database; this is the rest: SQL fragments Kysely has no
 * builder for (JSON paths, regular expressions, aggregates into JSON), how values are stored, the DDL of
 * tables made while servers run, locks, full-text search, and what kind of database it is (in this
 * process, or a server a round trip away), where the domain writes its hot path differently for each.
 *
 * Each database has its module (dialects/sqlite/sql.ts, dialects/postgres/sql.ts), one of which the
 * store chooses when it opens (`Store.sql`).
 */
import type { RawBuilder, SqlBool, Transaction } from 'kysely';
import type { Executor } from '../executor.ts';
import type { CheckedRegex } from '../regex/syntax.ts';
import type { Database } from '../schema.ts';
import type { SearchEngine } from './text-search.ts';
import type { VectorIndex } from './vector-index.ts';

/** What a column of a table made while servers run holds (the Tables API's row tables). */
export type ValueKind = 'text' | 'number' | 'integer' | 'boolean' | 'json';

/** The kinds of value JSON has, as a path into a JSON column finds them. */
export type JsonKind = 'string' | 'number' | 'boolean' | 'array' | 'null';

/** A path into a JSON object: its keys, outermost first (none: the document itself). */
export type JsonPath = readonly string[];

/** What every store's SQL offers. */
interface SqlForms {
  /**
   * Only this process uses the database (the embedded file: one server per data folder). At start,
   * whatever an earlier run claimed or made for its own processes is stale; files kept in the data
   * folder are seen by every process that serves the database.
   */
  readonly oneProcess: boolean;

  /**
   * The database has the views of migrations 0039 and 0040 (SQLite), whose insert triggers write
   * together what PostgreSQL writes with CTEs in one statement: `message_writes` (a message and its live
   * signal), `state_writes` (a turn's last states and the end of its event) and `chat_reply_writes` (a
   * bot's reply, counted, stored and signalled).
   */
  readonly writeViews: boolean;

  /** Full-text search with English stemming and relevance ranking, its entries in this database. */
  readonly textSearch: SearchEngine;

  /** The candidates of a search by meaning: the store's vector index, or every vector (vector-index.ts). */
  readonly vectorIndex: VectorIndex;

  /**
   * Holds a lock on `key` until `trx` ends, so that check-then-create sequences of the same key run one
   * after another, across processes too.
   */
  lockKey(trx: Transaction<Database>, key: string): Promise<void>;

  /**
   * What ends a select whose rows its transaction then rewrites: they are held until it ends, so a
   * change committed meanwhile by another is read, never overwritten.
   */
  readonly heldRows: RawBuilder<unknown>;

  // Values

  /** A boolean as a column stores it, and as `jsonValue` reads one: what it is compared with. */
  booleanValue(value: boolean): boolean | number;
  /**
   * A number to compare with an integer column: as it is, or, where the column's type cannot take it
   * (a fraction, a number past its range), as a double (the column's index then serves only whole
   * numbers in range, which are what integer columns hold).
   */
  numberForInteger(value: number): RawBuilder<unknown>;
  /**
   * `value` as of `kind`, where the store would read it as text otherwise: the columns of a
   * `(values …)` list, whose parameters have no type of their own.
   */
  typed(value: RawBuilder<unknown>, kind: ValueKind): RawBuilder<unknown>;

  // Expressions

  /** Whether `needle` occurs in `text`: a plain substring, case-sensitive, with no wildcards. */
  contains(text: RawBuilder<unknown>, needle: string): RawBuilder<SqlBool>;
  /** The remainder of `value` divided by a whole `divisor`, with the sign of `value` (a double's too). */
  modulo(value: RawBuilder<unknown>, divisor: number): RawBuilder<unknown>;
  /**
   * The later of `now` and one millisecond after `previous` (`now` where it is null), both ISO 8601 texts
   * as `toISOString` writes them: a stamp strictly after the one before it, whatever the clock said.
   */
  instantAfter(previous: RawBuilder<unknown>, now: RawBuilder<unknown>): RawBuilder<string>;
  /** Milliseconds from one instant to another, both ISO 8601 texts. */
  millisecondsBetween(from: RawBuilder<unknown>, to: RawBuilder<unknown>): RawBuilder<number>;
  /**
   * Whether the text `value` matches the pattern somewhere (true or false; null for null). A statement
   * that matches runs under a time limit: past it, it fails with what `isQueryTimeout` recognises.
   */
  regexMatch(value: RawBuilder<unknown>, regex: CheckedRegex): RawBuilder<SqlBool>;

  // JSON

  /** A JSON array of these values, as JSON text. */
  jsonArray(items: RawBuilder<unknown>[]): RawBuilder<string>;
  /** An aggregate: the values of `value` over the rows as a JSON array, as JSON text (`[]` for none). */
  jsonArrayAgg(value: RawBuilder<unknown>): RawBuilder<string>;
  /**
   * An aggregate: the distinct values of `value` over the rows as a JSON array (JSON text, or the array
   * itself as the driver read it; null for none).
   */
  jsonArrayAggDistinct(value: RawBuilder<unknown>): RawBuilder<unknown>;
  /**
   * The row `alias` names (of a subquery in the FROM clause), as JSON text: an object of its `columns`,
   * which are every column it has (PostgreSQL reads the row whole; SQLite has no such form, and names
   * each). Each value as the column holds it: JSON documents and instants stay texts.
   */
  rowJson(alias: string, columns: readonly string[]): RawBuilder<string>;
  /** An aggregate: the rows `alias` names as a JSON array of objects (as `rowJson`), JSON text (`[]` for none). */
  rowsJson(alias: string, columns: readonly string[]): RawBuilder<string>;
  /** Whether the value at `path` in the JSON column is of `kind` (null when the path leads nowhere). */
  jsonIs(column: RawBuilder<unknown>, path: JsonPath, kind: JsonKind): RawBuilder<SqlBool>;
  /**
   * The value at `path` as SQL, where `jsonIs` holds of it for `kind`: a text (compared by code point),
   * a number, or a boolean as `booleanValue` writes them.
   */
  jsonValue(
    column: RawBuilder<unknown>,
    path: JsonPath,
    kind: 'string' | 'number' | 'boolean',
  ): RawBuilder<unknown>;
  /** The length of the array at `path`, where `jsonIs` holds of it for `array`. */
  jsonArrayLength(column: RawBuilder<unknown>, path: JsonPath): RawBuilder<number>;

  // Tables whose columns change while servers run (the Tables API's row tables)

  /** The SQL type of a column of `kind` (text compares by code point, whatever the database's locale). */
  columnType(kind: ValueKind): string;
  /** The definition of an `id` column numbered by the database, from 1, never reusing a number. */
  readonly idColumn: RawBuilder<unknown>;
  /** What `returning` lists for every column of `table` in an `update … from`. */
  everyColumnOf(table: RawBuilder<unknown>): RawBuilder<unknown>;
  /** The names of the database's tables (of the connection's schema), as a query of `name`. */
  readonly tableNames: RawBuilder<{ name: string }>;
  /**
   * Rows were written to `table`: the store may gather its statistics again, in the background, once
   * enough were (a plan, not a result, depends on them).
   */
  rowsWritten(db: Executor, table: string, rows: number): void;
  /** Rows were copied into `table` with their ids: the ids it numbers next follow the largest. */
  idsCopied(db: Executor, table: string): Promise<void>;
}

/**
 * A database in this process (SQLite): a statement costs microseconds, so work is written as plain
 * statements, one after another, and every write, even one that changes nothing, waits its turn at the
 * one writer (and for the commit of its group): a read first spares it when there may be nothing to do.
 */
export interface InProcessSql extends SqlForms {
  readonly roundTrips: false;
  readonly writesInWith: false;
}

/**
 * A database server (PostgreSQL): each statement is a round trip, so the hot path folds several into
 * one, with forms the in-process database lacks: statements whose WITH clauses write (data-modifying
 * CTEs, each seeing the snapshot its statement began with), and a subquery run for each row of a list.
 */
export interface ServerSql extends SqlForms {
  readonly roundTrips: true;
  readonly writesInWith: true;
  /**
   * The rows of parallel lists, as a FROM item `alias` with one column per list (the first values of
   * each make the first row, and so on).
   */
  listRows(alias: string, columns: readonly ListColumn[]): RawBuilder<unknown>;
  /** A join of `query`, run for each row before it (which it may name), as `alias`. */
  joinEach(query: RawBuilder<unknown>, alias: string): RawBuilder<unknown>;
}

/** One column of `listRows`: its name and its values. */
export type ListColumn =
  | { name: string; kind: 'text'; values: readonly string[] }
  | { name: string; kind: 'integer'; values: readonly number[] };

/** The SQL of the store the server opened: asked by meaning, and `roundTrips` tells which forms it has. */
export type StoreSql = InProcessSql | ServerSql;
