import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runParley } from './process.ts';
import type { ParleyProcess } from './process.ts';
import { freshPostgresSchema } from './stores.ts';
import type { TestStore } from './stores.ts';

/** The line `parley serve` logs once it listens, with its URL. */
/**
 * How long `parley serve` may take to listen: a deadline, not a speed target (a start takes about a second;
 * on a machine shared with other suites, 11 to 20 s were seen).
 */
export const STARTS_WITHIN_MS = 60_000;
export const LISTENING = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"Parley is listening"/;

export interface ServedProcess {
  proc: ParleyProcess;
  url: string;
}

/**
 * `parley serve` processes of one suite, started as an operator starts them (the owner's token given in
 * `PARLEY_ADMIN_TOKEN`): on the suite's data folder, or folders of their own, and on PostgreSQL in one
 * fresh schema they share. `close()` stops them and removes what they stored.
 */
export class ServeProcesses {
  readonly token = `bp_pat_test_${randomBytes(24).toString('base64url')}`;
  private readonly procs: ParleyProcess[] = [];
  private readonly dirs: string[] = [];
  private shared: string | undefined;
  private schema: Awaited<ReturnType<typeof freshPostgresSchema>> | undefined;

  constructor(
    private readonly store: TestStore,
    private readonly name: string,
  ) {}

  /** A fresh data folder, removed by `close()`. */
  async newDataDir(): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), `parley-${this.name}-`));
    this.dirs.push(dir);
    return dir;
  }

  /** The suite's data folder: the same for every process that names no other (a restart finds its data). */
  async dataDir(): Promise<string> {
    this.shared ??= await this.newDataDir();
    return this.shared;
  }

  /** The PostgreSQL URL of the processes' schema; undefined on SQLite. */
  async databaseUrl(): Promise<string | undefined> {
    if (this.store.name !== 'postgres') return undefined;
    this.schema ??= await freshPostgresSchema();
    return this.schema.url;
  }

  /**
   * Starts `parley serve` with `args` besides its port and data folder (and `env` besides the owner's
   * token and the database); answers once it listens.
   */
  async serve(
    options: { dataDir?: string; args?: string[]; env?: Record<string, string> } = {},
  ): Promise<ServedProcess> {
    const dataDir = options.dataDir ?? (await this.dataDir());
    const databaseUrl = await this.databaseUrl();
    const proc = runParley(['serve', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])], {
      ...options.env,
      PARLEY_ADMIN_TOKEN: this.token,
      ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
    });
    this.procs.push(proc);
    const [, url] = await proc.waitFor(LISTENING, STARTS_WITHIN_MS);
    return { proc, url: url as string };
  }

  async close(): Promise<void> {
    for (const proc of this.procs) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
    }
    await this.schema?.drop();
    for (const dir of this.dirs) await rm(dir, { recursive: true, force: true });
  }
}
