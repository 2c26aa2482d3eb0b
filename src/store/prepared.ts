/**
 * Queries of the hot path, built with Kysely once and run many times. Building a query through the
 * query builder and compiling it cost more CPU than SQLite took to run it (a profile of a chat round
 * trip); the text of these queries never changes, only their values. A prepared query is written with
 * the query builder like any other (so its types and its SQL on each dialect come from Kysely): it is
 * compiled once per dialect with a marker in place of each argument, and each run puts the arguments
 * where the markers were. The database prepares the statement once too: the SQLite store keeps every
 * statement prepared (store/sqlite-group-commit.ts), and on Postgres these run as named statements
 * (store/postgres-named-statements.ts).
 *
 * Only values may vary: a query whose shape depends on the arguments (a list, an optional filter, a
 * column set) needs one prepared query per shape. Each run checks that it was given exactly the
 * arguments the query was built with.
 */
import { createQueryId, PostgresAdapter } from 'kysely';
import type { CompiledQuery, QueryResult, RootOperationNode } from 'kysely';
import type { Executor } from './index.ts';
import { nameStatement } from './postgres-named-statements.ts';

/** What an argument may be: a value bound as one parameter. */
export type Scalar = string | number | null;

/** A query builder, or a `sql` template (which compiles against the database it is given). */
export interface Buildable<Result> {
  compile(db: Executor): CompiledQuery<Result>;
}

/** Where each parameter of the compiled text comes from: an argument (by name) or a constant. */
type Slot = { arg: string } | { value: unknown };

interface Template {
  sql: string;
  query: RootOperationNode;
  slots: Slot[];
}

/** Stands in for an argument while the query is compiled; only the compiled parameters are compared with it. */
const MARKER = '\u0000prepared:';

export class PreparedQuery<Args extends Record<string, Scalar>, Result> {
  /** One template per dialect, keyed by its adapter (the same object for a database and its transactions). */
  private readonly templates = new WeakMap<object, Template>();

  constructor(
    /** Every argument the query takes, by name. */
    private readonly names: readonly (keyof Args & string)[],
    private readonly build: (db: Executor, args: Args) => Buildable<Result>,
  ) {}

  /** Runs the query on `db` (the database or a transaction) with these values. */
  execute(db: Executor, args: Args): Promise<QueryResult<Result>> {
    return db.executeQuery(this.compile(db, args));
  }

  /** The query compiled for `db`'s dialect with these values, as the query builder would compile it. */
  compile(db: Executor, args: Args): CompiledQuery<Result> {
    const template = this.template(db);
    const given = Object.keys(args);
    if (given.length !== this.names.length || given.some((name) => !this.names.includes(name))) {
      throw new Error(`a prepared query takes ${this.names.join(', ')}; it was given ${given.join(', ')}`);
    }
    const parameters = template.slots.map((slot) => ('arg' in slot ? (args[slot.arg] ?? null) : slot.value));
    return { sql: template.sql, query: template.query, parameters, queryId: createQueryId() };
  }

  private template(db: Executor): Template {
    const adapter = db.getExecutor().adapter;
    let template = this.templates.get(adapter);
    if (!template) {
      template = this.compileTemplate(db, adapter);
      this.templates.set(adapter, template);
    }
    return template;
  }

  private compileTemplate(db: Executor, adapter: object): Template {
    const markers = Object.fromEntries(this.names.map((name) => [name, `${MARKER}${name}`]));
    // The markers stand in for the arguments only while the query is built: the builder passes values on
    // without looking at them.
    const compiled = this.build(db, markers as Args).compile(db);
    const slots = compiled.parameters.map((value): Slot => {
      if (typeof value === 'string' && value.startsWith(MARKER)) return { arg: value.slice(MARKER.length) };
      return { value };
    });
    const used = new Set(slots.flatMap((slot) => ('arg' in slot ? [slot.arg] : [])));
    const unused = this.names.filter((name) => !used.has(name));
    if (unused.length > 0)
      throw new Error(`a prepared query does not use its arguments ${unused.join(', ')}`);
    // On Postgres its text runs as a named statement, parsed and planned once per connection.
    if (adapter instanceof PostgresAdapter) nameStatement(compiled.sql);
    return { sql: compiled.sql, query: compiled.query, slots };
  }
}

/** A query built once per dialect and run with new values each time (see PreparedQuery). */
export function prepare<Args extends Record<string, Scalar>, Result>(
  names: readonly (keyof Args & string)[],
  build: (db: Executor, args: Args) => Buildable<Result>,
): PreparedQuery<Args, Result> {
  return new PreparedQuery(names, build);
}

/**
 * Every key of `Row`, listed once and checked complete by the compiler: the arguments of a prepared
 * insert of whole rows (`everyKey<Row<'messages'>>()(['id', …])`).
 */
export function everyKey<Row>() {
  return <const Keys extends readonly (keyof Row & string)[]>(
    keys: Keys &
      (Exclude<keyof Row, Keys[number]> extends never
        ? unknown
        : { missing: Exclude<keyof Row, Keys[number]> }),
  ): Keys => keys;
}

/**
 * The prepared queries of a query whose shape varies (how many rows it writes, which of its parts it
 * has): one for each shape, named by the caller, of which the first `limit` are kept; past them, a
 * shape is built again for each run.
 */
export class PreparedShapes<Args extends Record<string, Scalar>, Result> {
  private readonly kept = new Map<string, PreparedQuery<Args, Result>>();

  constructor(private readonly limit: number) {}

  /** The query of `shape`, built by `build` with arguments `names` when it is not kept. */
  of(
    shape: string,
    names: readonly (keyof Args & string)[],
    build: (db: Executor, args: Args) => Buildable<Result>,
  ): PreparedQuery<Args, Result> {
    const kept = this.kept.get(shape);
    if (kept) return kept;
    const query = prepare(names, build);
    if (this.kept.size < this.limit) this.kept.set(shape, query);
    return query;
  }
}
