import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@botpress/client';
import { buildConfig } from '../../src/config.ts';
import type { SettingName } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import type { RunningServer } from '../../src/server.ts';
import { freshPostgresSchema } from './stores.ts';
import type { TestStore } from './stores.ts';

export interface TestServer {
  server: RunningServer;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** The settings it was started with (its DATA_DIR, and DATABASE_URL on PostgreSQL). */
  settings: Partial<Record<SettingName, string>>;
  /** The owner's personal access token, from first start. */
  token: string;
  /** The workspace created on first start. */
  workspaceId: string;
  /** An official client for the owner in the first workspace; `overrides` change any of its options. */
  client(overrides?: ConstructorParameters<typeof Client>[0]): Client;
  /**
   * Stops the server and starts a new one on the same store (and port): what survives is what was
   * stored. `changes` override settings of the first start (another model, say).
   */
  restart(changes?: Partial<Record<SettingName, string>>): Promise<void>;
  /** Stops the server and removes its data. */
  close(): Promise<void>;
}

/** A real Parley server on an ephemeral port, on a store of its own. */
export async function startTestServer(
  store: TestStore,
  settings: Partial<Record<SettingName, string>> = {},
): Promise<TestServer> {
  const token = `bp_pat_test_${randomBytes(24).toString('base64url')}`;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-test-'));
  const pgSchema = store.name === 'postgres' ? await freshPostgresSchema() : undefined;
  const base: Partial<Record<SettingName, string>> = {
    port: '0',
    host: '127.0.0.1',
    dataDir,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    adminToken: token,
    ...(pgSchema && { databaseUrl: pgSchema.url }),
    // Suites check what a $regex means, not how long it may take: on a busy machine SQLite's 100 ms
    // (a wall-clock bound) stopped a query of five rows. test/tables-regex.test.ts checks the 100 ms.
    sqliteRegexTimeoutMs: '10000',
    ...settings,
  };
  const config = buildConfig(base);
  const first = await startServer(config);
  if (!first.firstStart.created) throw new Error('test server did not start on an empty store');
  const workspaceId = first.firstStart.workspaceId;
  const port = new URL(first.url).port;
  const t: TestServer = {
    server: first,
    url: first.url,
    settings: base,
    token,
    workspaceId,
    client: (overrides) => new Client({ apiUrl: t.url, token, workspaceId, ...overrides }),
    restart: async (changes) => {
      await t.server.close();
      const next = changes ? buildConfig({ ...base, ...changes }) : config;
      t.server = await startServer({ ...next, port: Number(port) });
      t.url = t.server.url;
    },
    close: async () => {
      await t.server.close();
      await pgSchema?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}
