import { buildConfig, parseCommandLine } from '../config.ts';
import { backupStore, BackupError, restoreStore } from '../store/backup.ts';
import { CliError } from './errors.ts';
import { printHelp, wantsHelp } from './help.ts';
import { userPath } from './paths.ts';

const BACKUP_HELP = `usage: parley backup <file> [--data-dir D | --database-url URL]

Writes a backup of the server's store to <file>, while the server runs: with SQLite (DATA_DIR) a copy of
the database as one moment saw it; with PostgreSQL (DATABASE_URL) a pg_dump in its custom format (of the
URL's schema when its options set a search_path). Run it with the server's DATA_DIR or DATABASE_URL.
Restore it with parley restore.
`;

const RESTORE_HELP = `usage: parley restore <file> [--replace] [--data-dir D | --database-url URL]

Restores a backup of parley backup into the store of DATA_DIR or DATABASE_URL, with the server stopped.
The store must be empty (a new data folder, a new database) unless --replace: then SQLite's current
database is kept beside it (parley.db.replaced-<time>), and PostgreSQL's tables are dropped first. The
next start of the server migrates a backup of an older release forward.
`;

/** The store errors of a backup or restore are the operator's to fix: one line each. */
function said<T>(work: Promise<T>): Promise<T> {
  return work.catch((err: unknown) => {
    throw err instanceof BackupError ? new CliError(err.message) : err;
  });
}

export async function backupCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(BACKUP_HELP);
  const { values, positionals } = parseCommandLine(argv, process.env);
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new CliError('usage: parley backup <file>');
  const { store } = buildConfig(values);
  const started = Date.now();
  await said(backupStore(store, userPath(file)));
  process.stdout.write(
    `Backed up the ${store.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} store to ${file} (${Date.now() - started} ms)\n`,
  );
  return 0;
}

export async function restoreCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(RESTORE_HELP);
  const { values, flags, positionals } = parseCommandLine(argv, process.env, {
    replace: { type: 'boolean' },
  });
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new CliError('usage: parley restore <file> [--replace]');
  const { store } = buildConfig(values);
  const restored = await said(restoreStore(store, userPath(file), { replace: flags.replace === true }));
  const where = store.kind === 'sqlite' ? store.file : 'the PostgreSQL database';
  process.stdout.write(
    `Restored ${file} into ${where}${restored.kept ? ` (the database it replaced is ${restored.kept})` : ''}: start the server\n`,
  );
  return 0;
}
