// The SQLite store checkpoints its write-ahead log on a thread of its own, so no request's commit pays
// for copying the log into the database (see src/store/sqlite-checkpointer.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { openStore } from '../src/store/index.ts';
import type { Executor, Store } from '../src/store/index.ts';

test('what is written reaches the database file within a second or two, with no commit checkpointing it', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-store-'));
  const file = path.join(dir, 'parley.db');
  const store = await openStore({ kind: 'sqlite', file });
  try {
    await sleep(1200); // the migrations' pages are checkpointed
    const before = (await stat(file)).size;
    const value = 'x'.repeat(1000);
    for (let batch = 0; batch < 20; batch++) {
      const rows = Array.from({ length: 100 }, (_, i) => ({
        resource_id: `r${batch}`,
        key: `k${i}`,
        value,
      }));
      await store.db.insertInto('tags').values(rows).execute();
    }
    // 2 MB written: far below the writer's own checkpoint, so only the checkpointer moves it.
    const deadline = Date.now() + 5000;
    let size = before;
    while (Date.now() < deadline && size < before + 2_000_000) {
      await sleep(100);
      size = (await stat(file)).size;
    }
    assert.ok(size >= before + 2_000_000, `the database file grew from ${before} to ${size} bytes`);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

/** Writes of a resource's tags: one alone or in `db`'s transaction, one in a transaction, one in a transaction that fails. */
function tagWrites(store: Store, resourceId: string) {
  const insert = (db: Executor, key: string) =>
    db.insertInto('tags').values({ resource_id: resourceId, key, value: 'v' }).execute();
  return {
    insert,
    committing: (key: string) => store.db.transaction().execute((trx) => insert(trx, key)),
    failing: (key: string) =>
      store.db.transaction().execute(async (trx) => {
        await insert(trx, key);
        throw new Error('the caller gives up');
      }),
  };
}

/** The keys of a resource's tags, as the store's own connection sees them. */
async function keysOf(store: Store, resourceId: string): Promise<string[]> {
  const rows = await store.db
    .selectFrom('tags')
    .select('key')
    .where('resource_id', '=', resourceId)
    .orderBy('key')
    .execute();
  return rows.map((r) => r.key);
}

/** A store in a temp folder, the statements it runs counted, and a second connection to read its file. */
async function countedStore() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-store-'));
  const file = path.join(dir, 'parley.db');
  const statements: string[] = [];
  const store = await openStore({ kind: 'sqlite', file }, { onStatement: (s) => statements.push(s) });
  const reader = new SqliteDatabase(file, { readonly: true });
  /** What another connection sees: only what was committed. */
  const committedTags = (resourceId: string) =>
    reader.prepare('select count(*) as n from tags where resource_id = ?').get(resourceId) as { n: number };
  return {
    store,
    commits: () => statements.filter((s) => s === 'commit').length,
    /** The transaction control run so far: begin, commit, rollback and the savepoints' statements. */
    control: () => statements.filter((s) => /^(begin|commit|rollback|savepoint|release)\b/.test(s)).length,
    committedTags,
    close: async () => {
      reader.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

test('transactions that arrive together share one commit, and each is durable when it resolves', async () => {
  const { store, commits, control, committedTags, close } = await countedStore();
  try {
    const before = commits();
    const controlBefore = control();
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('tags')
          .values({ resource_id: 'group', key: `k${i}`, value: 'v' })
          .execute();
        // Each sees what the ones before it wrote: they run one at a time.
        const seen = await trx
          .selectFrom('tags')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('resource_id', '=', 'group')
          .executeTakeFirstOrThrow();
        return Number(seen.n);
      }),
    );
    const seen = [];
    for (const write of writes) {
      seen.push(await write);
      // Resolved means committed: another connection sees at least this one's row.
      assert.ok(committedTags('group').n >= seen.length);
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    const groups = commits() - before;
    assert.ok(groups < 5, `20 transactions took ${groups} commits`);
    // Each group's begin and commit, a savepoint for each transaction but the one that opened it, and a
    // release of every four of them (42 when each took a savepoint and released it).
    const savepoints = 20 - groups;
    assert.ok(
      control() - controlBefore <= 2 * groups + savepoints + Math.ceil(savepoints / 4),
      `transaction control: ${control() - controlBefore} statements for ${groups} groups`,
    );
  } finally {
    await close();
  }
});

test('a transaction that fails in a group rolls back alone, the one that opened it too; a write outside a transaction is durable when it resolves', async () => {
  const { store, committedTags, close } = await countedStore();
  try {
    const { insert, committing, failing } = tagWrites(store, 'mixed');
    const results = await Promise.allSettled([
      committing('a'),
      failing('b'),
      insert(store.db, 'c'),
      committing('d'),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.deepEqual(await keysOf(store, 'mixed'), ['a', 'c', 'd']);
    assert.equal(committedTags('mixed').n, 3);
    // A unique violation fails its own statement; the group's other writes stand.
    const again = await Promise.allSettled([committing('e'), insert(store.db, 'a')]);
    assert.deepEqual(
      again.map((r) => r.status),
      ['fulfilled', 'rejected'],
    );
    assert.equal(committedTags('mixed').n, 4);
    // The transaction that opened its group fails: the group is rolled back, the next ones open another.
    const first = tagWrites(store, 'first');
    const firsts = await Promise.allSettled([
      first.failing('a'),
      first.insert(store.db, 'b'),
      first.committing('c'),
      first.failing('d'),
      first.committing('e'),
    ]);
    assert.deepEqual(
      firsts.map((r) => r.status),
      ['rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(await keysOf(store, 'first'), ['b', 'c', 'e']);
    assert.equal(committedTags('first').n, 3);
  } finally {
    await close();
  }
});

test('a commit that fails fails every transaction of its group, none of their writes stays, and the next group works', async () => {
  const { store, close } = await countedStore();
  try {
    // A deferred foreign key is checked at the commit: the one way to make a commit fail on purpose.
    await sql`create table parent (id text primary key)`.execute(store.db);
    await sql`create table child (id text primary key, parent_id text references parent (id) deferrable initially deferred)`.execute(
      store.db,
    );
    const insertChild = (id: string, parent: string) =>
      store.db
        .transaction()
        .execute((trx) => sql`insert into child (id, parent_id) values (${id}, ${parent})`.execute(trx));
    await sql`insert into parent (id) values ('p')`.execute(store.db);
    const results = await Promise.allSettled([
      insertChild('a', 'p'),
      insertChild('b', 'missing'),
      insertChild('c', 'p'),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    for (const result of results) {
      assert.match(String(result.status === 'rejected' && result.reason), /FOREIGN KEY constraint failed/);
    }
    const rows = await sql<{ id: string }>`select id from child`.execute(store.db);
    assert.deepEqual(rows.rows, []);
    await insertChild('d', 'p');
    const after = await sql<{ id: string }>`select id from child`.execute(store.db);
    assert.deepEqual(
      after.rows.map((r) => r.id),
      ['d'],
    );
  } finally {
    await close();
  }
});
