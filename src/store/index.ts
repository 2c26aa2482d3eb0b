import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Migration, MigrationProvider, Transaction } from 'kysely';
import type { StoreConfig } from '../config.ts';
import type { Database } from './schema.ts';
import * as foundation from './migrations/0001_foundation.ts';
import * as runtime from './migrations/0002_runtime.ts';
import * as chat from './migrations/0003_chat.ts';
import * as botLogs from './migrations/0004_bot_logs.ts';
import * as engine from './migrations/0005_engine.ts';

export type Db = Kysely<Database>;
/** The database or a transaction on it: what repository functions run against. */
export type Executor = Db | Transaction<Database>;
export type Dialect = StoreConfig['kind'];

/** In order; a migration, once released, never changes. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_runtime': runtime,
  '0003_chat': chat,
  '0004_bot_logs': botLogs,
  '0005_engine': engine,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface Store {
  db: Db;
  dialect: Dialect;
  /** Throws when the database cannot answer a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openStore(config: StoreConfig): Promise<Store> {
  const db = config.kind === 'sqlite' ? openSqlite(config.file) : openPostgres(config.url);
  const store: Store = {
    db,
    dialect: config.kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
  try {
    await migrate(db, config.kind);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return store;
}

async function migrate(db: Db, dialect: Dialect): Promise<void> {
  // Kysely's migrator takes a lock table, so several processes starting at once on Postgres are safe.
  // Its bookkeeping tables go in the schema the connection uses (its search_path), like Parley's own:
  // otherwise it may take another schema's tables of the same name for its own.
  const migrationTableSchema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const { error, results } = await new Migrator({
    db,
    provider,
    ...(migrationTableSchema && { migrationTableSchema }),
  }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(
      `database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`,
    );
  }
}

function openSqlite(file: string): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  cachePreparedStatements(database);
  return new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
}

/** Statements kept prepared: enough for every query Parley makes, which are few distinct texts. */
const PREPARED_STATEMENTS = 1000;

/**
 * Kysely's SQLite driver prepares every statement again on each query; a profile showed that costing
 * more than running them. Parley's queries are a small set of texts (values are bound), so the prepared
 * statements are kept and reused. One connection runs one query at a time, so reuse is safe.
 */
function cachePreparedStatements(database: SqliteDatabase.Database): void {
  const prepare = database.prepare.bind(database);
  const prepared = new Map<string, SqliteDatabase.Statement>();
  database.prepare = ((source: string) => {
    let statement = prepared.get(source);
    if (!statement) {
      if (prepared.size >= PREPARED_STATEMENTS) prepared.clear();
      statement = prepare(source);
      prepared.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}

function openPostgres(url: string): Db {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** Postgres returns COUNT(*) as a string (bigint); SQLite as a number. */
export function toCount(value: string | number | bigint | null | undefined): number {
  return Number(value ?? 0);
}

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
