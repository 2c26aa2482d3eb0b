import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { getLoadablePath } from 'sqlite-vec';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type { KyselyConfig, Migration, MigrationProvider, PostgresPool, SqlBool } from 'kysely';
import { SETTINGS } from '../config.ts';
import type { StoreConfig } from '../config.ts';
import type { Database } from './schema.ts';
import type { Db } from './executor.ts';
import * as foundation from './migrations/0001_foundation.ts';
import * as runtime from './migrations/0002_runtime.ts';
import * as chat from './migrations/0003_chat.ts';
import * as botLogs from './migrations/0004_bot_logs.ts';
import * as engine from './migrations/0005_engine.ts';
import * as retries from './migrations/0006_retries.ts';
import * as files from './migrations/0010_files.ts';
import * as webchat from './migrations/0012_webchat.ts';
import * as userRecords from './migrations/0013_user_records.ts';
import * as messageMetadata from './migrations/0014_message_metadata.ts';
import * as tables from './migrations/0015_tables.ts';
import * as pendingEvents from './migrations/0016_pending_events.ts';
import * as scheduledEvents from './migrations/0017_scheduled_events.ts';
import * as webhooks from './migrations/0018_webhooks.ts';
import * as webhookSubscriptions from './migrations/0019_webhook_subscriptions.ts';
import * as integrations from './migrations/0020_integrations.ts';
import * as fairQueue from './migrations/0021_fair_queue.ts';
import * as llmCalls from './migrations/0022_llm_calls.ts';
import * as llmProviders from './migrations/0023_llm_providers.ts';
import * as passageVectors from './migrations/0024_passage_vectors.ts';
import * as turnLinks from './migrations/0025_turn_links.ts';
import * as rowVectors from './migrations/0026_row_vectors.ts';
import * as handoffs from './migrations/0027_handoffs.ts';
import * as fallbackMessage from './migrations/0028_fallback_message.ts';
import * as hitlConversations from './migrations/0029_hitl_conversations.ts';
import * as vectorSignatures from './migrations/0030_vector_signatures.ts';
import * as hub from './migrations/0031_hub.ts';
import * as installationAliases from './migrations/0032_installation_aliases.ts';
import * as workflowUpdates from './migrations/0033_workflow_updates.ts';
import * as botVersions from './migrations/0034_bot_versions.ts';
import * as conversationEventStamps from './migrations/0035_conversation_event_stamps.ts';
import * as signatureVersions from './migrations/0036_signature_versions.ts';
import * as botDrafts from './migrations/0037_bot_drafts.ts';
import * as draftTests from './migrations/0038_draft_tests.ts';
import * as writeViews from './migrations/0039_write_views.ts';
import * as chatReplyWrites from './migrations/0040_chat_reply_writes.ts';
import * as searchScopes from './migrations/0041_search_scopes.ts';
import * as sqliteSignatureVersions from './migrations/0042_sqlite_signature_versions.ts';
import { BACKSTOP_CHECKPOINT_PAGES, startCheckpointer } from './sqlite-checkpointer.ts';
import { defineSqliteFunctions } from './sqlite-functions.ts';
import { GroupCommitSqliteDialect } from './sqlite-group-commit.ts';
import { namedStatementPool } from './postgres-named-statements.ts';
import { cappedPool, requestConnections, sharedPool } from './postgres-lanes.ts';
import { postgresSql } from './dialects/postgres/sql.ts';
import { sqliteSql } from './dialects/sqlite/sql.ts';
import type { StoreSql } from './dialects/store-sql.ts';
import { loadSqliteVec, sqliteVectorIndex } from './dialects/sqlite/vector-index.ts';
import { postgresVectorIndex } from './dialects/postgres/vector-index.ts';
import { EXACT_VECTORS } from './vectors/exact.ts';
import type { VectorIndex } from './dialects/vector-index.ts';

/** The SQLite connection's page cache, in KiB. */
const SQLITE_CACHE_KIB = 64 * 1024;
export type { Db, Executor } from './executor.ts';
export type { JsonKind, ServerSql, StoreSql, ValueKind } from './dialects/store-sql.ts';
export type { SearchEngine, SearchEntry, SearchHit, SearchRequest } from './dialects/text-search.ts';
export type {
  VectorCandidate,
  VectorIndex,
  VectorIndexKind,
  VectorRequest,
} from './dialects/vector-index.ts';

/** In order; a migration, once released, never changes. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_runtime': runtime,
  '0003_chat': chat,
  '0004_bot_logs': botLogs,
  '0005_engine': engine,
  '0006_retries': retries,
  '0010_files': files,
  '0012_webchat': webchat,
  '0013_user_records': userRecords,
  '0014_message_metadata': messageMetadata,
  '0015_tables': tables,
  '0016_pending_events': pendingEvents,
  '0017_scheduled_events': scheduledEvents,
  '0018_webhooks': webhooks,
  '0019_webhook_subscriptions': webhookSubscriptions,
  '0020_integrations': integrations,
  '0021_fair_queue': fairQueue,
  '0022_llm_calls': llmCalls,
  '0023_llm_providers': llmProviders,
  '0024_passage_vectors': passageVectors,
  '0025_turn_links': turnLinks,
  '0026_row_vectors': rowVectors,
  '0027_handoffs': handoffs,
  '0028_fallback_message': fallbackMessage,
  '0029_hitl_conversations': hitlConversations,
  '0030_vector_signatures': vectorSignatures,
  '0031_hub': hub,
  '0032_installation_aliases': installationAliases,
  '0033_workflow_updates': workflowUpdates,
  '0034_bot_versions': botVersions,
  '0035_conversation_event_stamps': conversationEventStamps,
  '0036_signature_versions': signatureVersions,
  '0037_bot_drafts': botDrafts,
  '0038_draft_tests': draftTests,
  '0039_write_views': writeViews,
  '0040_chat_reply_writes': chatReplyWrites,
  '0041_search_scopes': searchScopes,
  '0042_sqlite_signature_versions': sqliteSignatureVersions,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface Store {
  db: Db;
  /**
   * The same database, for the work of turns (the engine's queue, what a turn reads, the bot's reply):
   * on Postgres its statements take connections that requests cannot all hold (postgres-lanes.ts).
   * On SQLite it is `db`.
   */
  turnDb: Db;
  /** What differs between the databases, asked for by meaning (dialects/store-sql.ts). */
  sql: StoreSql;
  /** What the store said while it opened, for the server's log (the vector index it could not load). */
  notices: readonly string[];
  /** Throws when the database cannot answer a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Errors of the store's connections that no query is waiting for (an idle connection that broke). */
export type StoreErrorReporter = (err: Error) => void;

export interface StoreHooks {
  onError?: StoreErrorReporter;
  /** Each statement the store runs (transaction control included), for the metrics. */
  onStatement?: (sql: string) => void;
}

export async function openStore(config: StoreConfig, hooks: StoreHooks = {}): Promise<Store> {
  const onError = hooks.onError ?? (() => {});
  const log = statementLog(hooks.onStatement);
  const notices: string[] = [];
  const { db, turnDb, vectorIndex } =
    config.kind === 'sqlite'
      ? openSqlite(config, log, notices, hooks.onStatement)
      : openPostgres(config, onError, log);
  const checkpointer = config.kind === 'sqlite' ? startCheckpointer(config.file, onError) : undefined;
  // On Postgres the health check has a connection of its own: when slow queries hold every pooled
  // connection, /readyz still tells whether the database answers, instead of queueing behind them.
  const health = config.kind === 'postgres' ? healthCheckPool(config, onError) : undefined;
  const store: Store = {
    db,
    turnDb,
    sql: config.kind === 'sqlite' ? sqliteSql(vectorIndex) : postgresSql(vectorIndex),
    notices,
    ping: async () => {
      if (health) await health.query('select 1');
      else await sql`select 1`.execute(db);
    },
    close: async () => {
      await checkpointer?.stop();
      if (turnDb !== db) await turnDb.destroy();
      await db.destroy();
      await health?.end();
    },
  };
  try {
    await migrate(db, config.kind);
  } catch (err) {
    await checkpointer?.stop();
    if (turnDb !== db) await turnDb.destroy();
    await db.destroy();
    await health?.end();
    throw err;
  }
  return store;
}

/** sqlite-vec's loadable file for this platform (its npm package's), or undefined where it has none. */
function sqliteVecPath(
  config: Extract<StoreConfig, { kind: 'sqlite' }>,
  notices: string[],
): string | undefined {
  if (config.vectorExtension !== undefined) return config.vectorExtension;
  try {
    return getLoadablePath();
  } catch (err) {
    notices.push(
      `sqlite-vec has no build for this platform (${err instanceof Error ? err.message : String(err)}): searches by meaning scan every vector exactly`,
    );
    return undefined;
  }
}

async function migrate(db: Db, kind: StoreConfig['kind']): Promise<void> {
  // Kysely's migrator takes a lock table, so several processes starting at once on Postgres are safe.
  // Its bookkeeping tables go in the schema the connection uses (its search_path), like Parley's own:
  // otherwise it may take another schema's tables of the same name for its own.
  const migrationTableSchema =
    kind === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({ db, provider, ...(migrationTableSchema && { migrationTableSchema }) });
  let { error, results } = await migrator.migrateToLatest();
  // Seen once in the test suite, with other schemas of the database created and dropped meanwhile: the
  // migrator's own lock table reported missing just after it was set up. Its next try finds it.
  for (let retry = 0; retry < 2 && error && isMissingBookkeeping(error); retry++) {
    ({ error, results } = await migrator.migrateToLatest());
  }
  // Seen once more under the same conditions: a fresh schema's first migration failed on a column of
  // another schema's table. Each migration runs in a transaction of its own, so a second try starts
  // from what the first committed; a migration that is wrong fails again the same way.
  if (error && kind === 'postgres') ({ error, results } = await migrator.migrateToLatest());
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(
      `database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`,
    );
  }
}

/**
 * An error about the migrator's own tables (`kysely_migration…`), or the schema it has just made sure of,
 * not existing (the second seen once too, under the same conditions).
 */
function isMissingBookkeeping(error: unknown): boolean {
  return error instanceof Error && /(kysely_migration\w*|schema "\w+") does not exist/.test(error.message);
}

type KyselyLog = KyselyConfig['log'];

/** Kysely's log, told of each statement it runs (none: no log, so no cost). */
function statementLog(onStatement: ((sql: string) => void) | undefined): KyselyLog {
  if (!onStatement) return undefined;
  return (event) => {
    if (event.level === 'query') onStatement(event.query.sql);
  };
}

/** The SQLite database, and its vector index: sqlite-vec's where it loads. */
function openSqlite(
  config: Extract<StoreConfig, { kind: 'sqlite' }>,
  log: KyselyLog,
  notices: string[],
  onStatement?: (sql: string) => void,
): {
  db: Db;
  turnDb: Db;
  vectorIndex: VectorIndex;
} {
  const { file } = config;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  // The pages of the indexes a message writes (by conversation, by user, by time) are spread over the file:
  // the default cache of 2 MB sent most of them back to the file under load.
  database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  // Checkpoints run on a thread of their own (sqlite-checkpointer.ts); this one is the backstop.
  database.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const runStatement = defineSqliteFunctions(
    database,
    config.regexTimeoutMs ?? Number(SETTINGS.sqliteRegexTimeoutMs.default),
  );
  const db = new Kysely<Database>({
    dialect: new GroupCommitSqliteDialect(database, onStatement, runStatement),
    ...(log && { log }),
  });
  const extension = config.vectorIndex === 'exact' ? undefined : sqliteVecPath(config, notices);
  const vecLoaded =
    extension !== undefined && loadSqliteVec(database, extension, (notice) => notices.push(notice));
  return { db, turnDb: db, vectorIndex: sqliteVectorIndex(vecLoaded, config.vectorCacheBytes) };
}

function openPostgres(
  config: Extract<StoreConfig, { kind: 'postgres' }>,
  onError: StoreErrorReporter,
  log: KyselyLog,
): { db: Db; turnDb: Db; vectorIndex: VectorIndex } {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    // No request holds a connection for long: a statement past this is cancelled.
    statement_timeout: config.statementTimeoutMs,
    types: { getTypeParser },
  });
  // A connection that breaks must not crash the process, whether it sits idle in the pool (the pool
  // replaces it) or is checked out between two queries (the pool listens only to idle ones; the next
  // query fails, and the broken connection is dropped when it is released). Either way it is reported.
  pool.on('error', onError);
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      // Idle, the pool's own listener reports it (as the pool's 'error' above).
      if (client.listenerCount('error') === 1) onError(err);
    });
  });
  const named = namedStatementPool(pool);
  const kysely = (lanePool: PostgresPool) =>
    new Kysely<Database>({ dialect: new PostgresDialect({ pool: lanePool }), ...(log && { log }) });
  return {
    db: kysely(cappedPool(named, requestConnections(config.poolSize))),
    turnDb: kysely(sharedPool(named)),
    vectorIndex:
      config.vectorIndex === 'exact' ? EXACT_VECTORS : postgresVectorIndex(config.vectorCacheBytes),
  };
}

function healthCheckPool(config: Extract<StoreConfig, { kind: 'postgres' }>, onError: StoreErrorReporter) {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: 1,
    statement_timeout: 2000,
    connectionTimeoutMillis: 2000,
  });
  pool.on('error', onError);
  return pool;
}

const BIGINT_OID = 20;

/**
 * Postgres sends `bigint` (what COUNT(*) and SUM answer, and state expiries) as text, to spare
 * JavaScript numbers past 2^53; Parley's never come near, so they are read as numbers, like SQLite's.
 */
function getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === BIGINT_OID) return (value: string) => Number(value);
  // pg-types declares its parsers as `any`: each takes the column's text and answers its value.
  return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
}

/** A count as a number, whichever way the driver gave it. */
export function toCount(value: string | number | bigint | null | undefined): number {
  return Number(value ?? 0);
}

/** A truth value as a boolean, whichever way the driver gave it (SQLite answers 1 or 0). */
export function isTrue(value: SqlBool): boolean {
  return value === true || value === 1;
}

export { isStatementTimeout, isUniqueViolation } from './errors.ts';
