import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface TestStore {
  name: 'sqlite' | 'postgres';
  /** Set when the store cannot run here: the suites for it are skipped with this reason. */
  skip?: string;
}

/** Why Postgres at `url` does not answer, or undefined when it does (also used by the benchmarks). */
export async function postgresProblem(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;

let cached: Promise<TestStore[]> | undefined;

/**
 * SQLite always; Postgres when one answers at TEST_DATABASE_URL (default 127.0.0.1:5432/test).
 * On CI (CI=true) Postgres is required: an unreachable one fails the run instead of skipping.
 */
export function testStores(): Promise<TestStore[]> {
  return (cached ??= (async () => {
    const problem = await postgresProblem(testDatabaseUrl);
    if (problem && process.env.CI === 'true') {
      throw new Error(`CI=true requires Postgres at ${testDatabaseUrl}, but: ${problem}`);
    }
    return [
      { name: 'sqlite' },
      problem
        ? { name: 'postgres', skip: `Postgres not reachable at ${testDatabaseUrl} (${problem})` }
        : { name: 'postgres' },
    ];
  })());
}

/** A fresh, empty schema in the test database, so every test server starts from nothing. */
export function freshPostgresSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  return createSchema(testDatabaseUrl, 't');
}

/**
 * A fresh schema in the database at `databaseUrl`, and the URL whose connections use it (their
 * search_path); `drop` removes it with everything in it.
 */
export async function createSchema(
  databaseUrl: string,
  prefix: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}
