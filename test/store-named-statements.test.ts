// On Postgres, statements whose text runs again and again run as named statements
// (src/store/postgres-named-statements.ts): what is named, what never is, and that a table of the Tables
// API that gains a column is still read right after its rows were read many times.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../src/store/index.ts';
import type { Store } from '../src/store/index.ts';
import { HOT_AFTER } from '../src/store/postgres-named-statements.ts';
import { createTestBot, unique } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { freshPostgresSchema, testStores } from './helpers/stores.ts';

const postgres = (await testStores()).find((s) => s.name === 'postgres');

/** The texts of the statements the store's one connection has prepared. */
async function preparedTexts(store: Store): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
    store.db,
  );
  return rows.map((r) => r.statement);
}

describe('named statements on postgres', { skip: postgres?.skip ?? !postgres }, () => {
  let schema: Awaited<ReturnType<typeof freshPostgresSchema>>;
  let store: Store;
  before(async () => {
    schema = await freshPostgresSchema();
    // One connection: what it prepared is what the next query on the store sees.
    store = await openStore({ kind: 'postgres', url: schema.url, poolSize: 1, statementTimeoutMs: 5000 });
  });
  after(async () => {
    await store?.close();
    await schema?.drop();
  });

  test(`a text is named after ${HOT_AFTER} runs, and runs the same named`, async () => {
    const marker = unique('hot');
    const read = () =>
      sql<{
        n: number;
        tag: string;
      }>`select count(*)::int as n, ${marker}::text as tag from bots where id <> ${marker}`.execute(store.db);
    for (let run = 1; run < HOT_AFTER; run++) {
      await read();
      assert.ok(
        !(await preparedTexts(store)).some((text) => text.includes('as tag from bots')),
        `run ${run}`,
      );
    }
    const named = await read();
    assert.ok(
      (await preparedTexts(store)).some((text) => text.includes('as tag from bots')),
      `prepared after run ${HOT_AFTER}`,
    );
    assert.deepEqual(named.rows, [{ n: 0, tag: marker }]);
    // Named, it binds new values as before.
    const again = await sql<{
      tag: string;
    }>`select count(*)::int as n, ${'other'}::text as tag from bots where id <> ${marker}`.execute(store.db);
    assert.equal(again.rows[0]?.tag, 'other');
  });

  test('transaction control, DDL and the row tables of the Tables API are never named', async () => {
    await sql`create table tbl_rows_named_probe (id text primary key)`.execute(store.db);
    for (let run = 0; run < HOT_AFTER * 2; run++) {
      await sql`select id from tbl_rows_named_probe where id = ${String(run)}`.execute(store.db);
      await store.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
      });
    }
    const texts = await preparedTexts(store);
    assert.ok(!texts.some((text) => text.includes('tbl_rows_named_probe')), texts.join('\n'));
    assert.ok(!texts.some((text) => /^\s*(begin|commit)/i.test(text)), texts.join('\n'));
  });
});

for (const store of await testStores()) {
  describe(`a table that gains a column (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(async () => {
      await t?.close();
    });

    test('rows read many times are read with the new column after it is added', async () => {
      const { client } = await createTestBot(t, 'named-tables');
      const name = `${unique('grow').replace(/[^a-zA-Z0-9]/g, '')}Table`;
      await client.createTable({
        name,
        schema: { type: 'object', properties: { title: { type: 'string' } } },
      });
      await client.createTableRows({ table: name, rows: [{ title: 'first' }] });
      for (let run = 0; run < HOT_AFTER * 3; run++) {
        const { rows } = await client.findTableRows({ table: name });
        assert.equal(rows.length, 1);
      }
      await client.updateTable({
        table: name,
        schema: { type: 'object', properties: { title: { type: 'string' }, size: { type: 'number' } } },
      });
      await client.updateTableRows({ table: name, rows: [{ id: 1, size: 3 }] });
      const { rows } = await client.findTableRows({ table: name });
      assert.equal(rows[0]?.title, 'first');
      assert.equal(rows[0]?.size, 3);
    });
  });
}
