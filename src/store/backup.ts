import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import type { StoreConfig } from '../config.ts';

/**
 * Backups of a store and their restore, each store's own way: SQLite copies itself with `VACUUM INTO`
 * (one read transaction: in WAL mode it sees one moment of the database while the server goes on
 * writing), PostgreSQL with `pg_dump` (one snapshot too) in its custom format, restored by `pg_restore`.
 * A backup file says which it is by its first bytes.
 */
export type BackupKind = 'sqlite' | 'postgres';

/** A mistake of whoever backs up or restores (a missing file, a store that is not empty): said as is. */
export class BackupError extends Error {}

const SQLITE_MAGIC = 'SQLite format 3\0';
const PG_DUMP_MAGIC = 'PGDMP';

/** Which store a backup file is of, from its first bytes; undefined when it is neither. */
export function backupKindOf(file: string): BackupKind | undefined {
  const head = Buffer.alloc(16);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  const text = head.toString('latin1');
  if (text === SQLITE_MAGIC) return 'sqlite';
  if (text.startsWith(PG_DUMP_MAGIC)) return 'postgres';
  return undefined;
}

/** Writes a backup of the store to `file` (which must not exist yet); it appears whole or not at all. */
export async function backupStore(store: StoreConfig, file: string): Promise<BackupKind> {
  if (fs.existsSync(file)) throw new BackupError(`${file} exists: choose a new file for the backup`);
  const partial = `${file}.partial`;
  await rm(partial, { force: true });
  try {
    if (store.kind === 'sqlite') backupSqlite(store.file, partial);
    else
      await run('pg_dump', [
        '--format=custom',
        '--no-owner',
        ...schemaArgs(store.url),
        `--file=${partial}`,
        libpqUrl(store.url),
      ]);
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
  return store.kind;
}

function backupSqlite(source: string, target: string): void {
  if (!fs.existsSync(source)) throw new BackupError(`no Parley database at ${source}`);
  const db = new SqliteDatabase(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('vacuum into ?').run(target);
  } finally {
    db.close();
  }
}

/**
 * Restores a backup into the configured store, which must hold no Parley database yet (a new data folder,
 * a new database), unless `replace`: then SQLite's current file is kept beside it, renamed, and
 * PostgreSQL's objects are dropped first. The server must be stopped; its next start migrates the
 * restored database forward if the backup is of an older release.
 */
export async function restoreStore(
  store: StoreConfig,
  file: string,
  options: { replace: boolean },
): Promise<{ kind: BackupKind; kept?: string }> {
  if (!fs.existsSync(file)) throw new BackupError(`${file} does not exist`);
  const kind = backupKindOf(file);
  if (kind === undefined)
    throw new BackupError(`${file} is not a backup of Parley (neither SQLite nor pg_dump)`);
  if (kind !== store.kind)
    throw new BackupError(
      `${file} is a backup of ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, and the store is ${store.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: restore it with the matching DATA_DIR or DATABASE_URL`,
    );
  if (store.kind === 'sqlite') return { kind, ...(await restoreSqlite(store.file, file, options.replace)) };
  const populated = await postgresHasParley(store.url);
  if (populated && !options.replace)
    throw new BackupError(
      'the database already holds Parley’s tables: restore into an empty one, or pass --replace',
    );
  await run('pg_restore', [
    '--no-owner',
    '--exit-on-error',
    '--single-transaction',
    ...(populated ? ['--clean', '--if-exists'] : []),
    `--dbname=${libpqUrl(store.url)}`,
    file,
  ]);
  return { kind };
}

async function restoreSqlite(target: string, file: string, replace: boolean): Promise<{ kept?: string }> {
  const check = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const found = check
      .prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'")
      .get();
    if (found === undefined) throw new BackupError(`${file} is an SQLite file but not a Parley database`);
    const integrity = check.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupError(`${file} is damaged: ${String(integrity)}`);
  } finally {
    check.close();
  }
  let kept: string | undefined;
  if (fs.existsSync(target)) {
    if (!replace)
      throw new BackupError(
        `${target} exists: restore into a new data folder, or pass --replace (the current file is kept)`,
      );
    kept = `${target}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    // Its write-ahead log goes with it: the two are one database.
    for (const suffix of ['', '-wal', '-shm'])
      if (fs.existsSync(target + suffix)) await rename(target + suffix, kept + suffix);
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const partial = `${target}.restoring`;
  fs.copyFileSync(file, partial);
  await rename(partial, target);
  return kept === undefined ? {} : { kept };
}

/**
 * The URL as libpq reads it: its query re-encoded with %20 for spaces, since libpq takes a `+` as itself
 * (so `options=-c+search_path%3Dx`, as URLSearchParams writes it, would set a parameter "+search_path").
 */
function libpqUrl(url: string): string {
  const parsed = new URL(url);
  const query = [...parsed.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  parsed.search = query.length > 0 ? `?${query.join('&')}` : '';
  return parsed.toString();
}

/** The schema a URL's connections use (`options=-c search_path=…`), which is all of Parley's a dump takes. */
function schemaArgs(url: string): string[] {
  const options = new URL(url).searchParams.get('options') ?? '';
  const schema = /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
  return schema ? [`--schema=${schema}`] : [];
}

async function postgresHasParley(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ found: string | null }>(
      "select to_regclass('kysely_migration')::text as found",
    );
    return rows[0]?.found != null;
  } finally {
    await client.end();
  }
}

/** Runs a PostgreSQL tool; its error output, without the URL (it may hold a password), says why it failed. */
async function run(command: string, args: string[]): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('exit', resolve);
    child.once('error', (err) =>
      reject(new BackupError(`${command} could not run (${err.message}): install PostgreSQL's client tools`)),
    );
  });
  if (code !== 0)
    throw new BackupError(`${command} failed: ${errors.trim().split('\n').slice(-3).join(' ')}`);
}
