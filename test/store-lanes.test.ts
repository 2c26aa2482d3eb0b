// On Postgres, requests may hold only part of the pool; the rest is kept for the work of turns
// (src/store/postgres-lanes.ts): with every connection requests may hold taken, another request waits
// for one of them, and a turn's statement still runs at once. On SQLite there is one connection.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../src/store/index.ts';
import type { Db, Store } from '../src/store/index.ts';
import { requestConnections } from '../src/store/postgres-lanes.ts';
import { freshPostgresSchema, testStores } from './helpers/stores.ts';

const postgres = (await testStores()).find((s) => s.name === 'postgres');

const POOL_SIZE = 4;

/** A transaction that holds its connection until `release` is called. */
function holdConnection(db: Db): { holding: Promise<void>; release(): void; done: Promise<void> } {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const started = new Promise<void>((resolve) => (holding = resolve));
  const done = db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx);
    holding();
    await released;
  });
  return { holding: started, release, done };
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe(
  'the connections of requests and of turns, on postgres',
  { skip: postgres?.skip ?? !postgres },
  () => {
    let schema: Awaited<ReturnType<typeof freshPostgresSchema>>;
    let store: Store;
    before(async () => {
      schema = await freshPostgresSchema();
      store = await openStore({
        kind: 'postgres',
        url: schema.url,
        poolSize: POOL_SIZE,
        statementTimeoutMs: 5000,
      });
    });
    after(async () => {
      await store?.close();
      await schema?.drop();
    });

    test('requests hold at most their part of the pool, and a turn does not wait behind them', async () => {
      const share = requestConnections(POOL_SIZE);
      assert.ok(share >= 1 && share < POOL_SIZE, `requests may hold ${share} of ${POOL_SIZE}`);
      const holds = Array.from({ length: share }, () => holdConnection(store.db));
      await Promise.all(holds.map((h) => h.holding));

      const waitingRequest = sql<{ n: number }>`select 2 as n`.execute(store.db);
      assert.equal(await settlesWithin(waitingRequest, 300), false, 'a request past the share waits');

      // The turns' connections are free: several of their statements run at once, while requests wait.
      const turns = Promise.all(
        Array.from({ length: POOL_SIZE - share }, (_, i) =>
          sql<{ n: number }>`select ${i}::int as n`.execute(store.turnDb),
        ),
      );
      assert.equal(await settlesWithin(turns, 2000), true, "a turn's statements run at once");

      holds[0]?.release();
      assert.equal(
        await settlesWithin(waitingRequest, 2000),
        true,
        'the waiting request runs once one is released',
      );
      assert.equal((await waitingRequest).rows[0]?.n, 2);
      for (const h of holds) h.release();
      await Promise.all(holds.map((h) => h.done));
    });

    test('a request whose statement fails gives its place back', async () => {
      // Three times as many failing requests as the share, one after the other: the share is still whole.
      for (let i = 0; i < requestConnections(POOL_SIZE) * 3; i++) {
        await assert.rejects(sql`select * from no_such_table`.execute(store.db));
      }
      const holds = Array.from({ length: requestConnections(POOL_SIZE) }, () => holdConnection(store.db));
      assert.equal(await settlesWithin(Promise.all(holds.map((h) => h.holding)), 2000), true);
      for (const h of holds) h.release();
      await Promise.all(holds.map((h) => h.done));
    });
  },
);

describe('the connections of requests and of turns, on sqlite', () => {
  test('are one: turns and requests share the one writer', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-lanes-'));
    const store = await openStore({ kind: 'sqlite', file: path.join(dir, 'parley.db') });
    try {
      assert.equal(store.turnDb, store.db);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
