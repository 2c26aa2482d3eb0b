import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidQueryError } from '@botpress/client';
import { createTestBot, rejectsWith, waitFor } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import { jobCompleted } from './helpers/tables.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** Computed columns (code in the bot sandbox) and full-text search over searchable columns. */

let tables = 0;
const tableName = (base: string) => `${base}${++tables}Table`;

const orderSchema = (code: string, dependencies = ['price', 'qty']) => ({
  type: 'object',
  properties: {
    item: { type: 'string', 'x-zui': { searchable: true } },
    price: { type: 'number' },
    qty: { type: 'number' },
    total: { type: 'number', 'x-zui': { computed: { action: 'code', dependencies, code } } },
    summary: { type: 'string', 'x-zui': { computed: { action: 'ai', prompt: 'Summarise {{item}}' } } },
  },
});

for (const store of await testStores()) {
  describe(`Tables: computed columns and search (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'tables-computed');
    });
    after(() => t.close());

    test('waitComputed answers rows whose code columns are computed; ai columns stay stale', async () => {
      const table = tableName('Computed');
      await bot.client.createTable({ name: table, schema: orderSchema('return row.price * row.qty;') });
      const { rows } = await bot.client.createTableRows({
        table,
        rows: [{ item: 'tea', price: 2.5, qty: 4 }],
        waitComputed: true,
      });
      const [row] = rows;
      assert.equal(row?.total, 10);
      assert.deepEqual(row?.stale, ['summary']);
      assert.equal(row?.computed.total?.status, 'computed');
      assert.equal(row?.computed.summary?.status, 'stale');
      assert.equal(row?.summary, null);
    });

    test('without waitComputed the column is stale, then computed by the worker; a change of a dependency computes it again', async () => {
      const table = tableName('Later');
      await bot.client.createTable({ name: table, schema: orderSchema('return row.price * row.qty;') });
      const { rows } = await bot.client.createTableRows({
        table,
        rows: [{ item: 'cake', price: 3, qty: 2 }],
      });
      const id = rows[0]?.id ?? 0;
      assert.ok((rows[0]?.stale ?? []).includes('total'));
      const computed = await waitFor('the worker to compute total', async () => {
        const { row } = await bot.client.getTableRow({ table, id });
        return row.total === 6 && row;
      });
      assert.ok(!(computed.stale ?? []).includes('total'));
      // `stale` counts the rows with a stale column: here the ai column keeps the row stale.
      assert.equal((await bot.client.getTable({ table })).stale, 1);
      const { rows: updated } = await bot.client.updateTableRows({
        table,
        rows: [{ id, qty: 5 }],
        waitComputed: true,
      });
      assert.equal(updated[0]?.total, 15);
      // A column it does not depend on leaves it computed.
      const { rows: renamed } = await bot.client.updateTableRows({ table, rows: [{ id, item: 'pie' }] });
      assert.ok(!(renamed[0]?.stale ?? []).includes('total'));
      assert.equal(renamed[0]?.total, 15);
    });

    test('code that throws, or answers the wrong type, gives the column an error status; the row is kept', async () => {
      const table = tableName('Failing');
      await bot.client.createTable({
        name: table,
        schema: orderSchema('if (row.qty > 1) throw new Error("too many"); return "not a number";'),
      });
      const { rows } = await bot.client.createTableRows({
        table,
        rows: [
          { item: 'a', price: 1, qty: 2 },
          { item: 'b', price: 1, qty: 1 },
        ],
        waitComputed: true,
      });
      assert.equal(rows[0]?.computed.total?.status, 'error');
      assert.match(String(rows[0]?.computed.total?.error), /too many/);
      assert.equal(rows[1]?.computed.total?.status, 'error');
      assert.match(String(rows[1]?.computed.total?.error), /must be a number/);
      assert.equal(rows[0]?.total, null);
    });

    test('adding a computed column makes the rows stale and computes them', async () => {
      const table = tableName('Added');
      await bot.client.createTable({ name: table, schema: { item: 'x', price: 1, qty: 1 } });
      const { rows } = await bot.client.createTableRows({ table, rows: [{ item: 'x', price: 4, qty: 2 }] });
      const { staleColumns } = await bot.client.updateTable({
        table,
        schema: {
          double: {
            type: 'number',
            'x-zui': { computed: { action: 'code', dependencies: ['price'], code: 'return row.price * 2' } },
          },
        },
      });
      assert.deepEqual(staleColumns, ['double']);
      await waitFor('the new column to be computed', async () => {
        const { row } = await bot.client.getTableRow({ table, id: rows[0]?.id ?? 0 });
        return row.double === 8;
      });
    });

    test('a removed computed column leaves no state in the rows', async () => {
      const table = tableName('Removed');
      await bot.client.createTable({
        name: table,
        schema: orderSchema('return row.price * row.qty;'),
        isComputeEnabled: false,
      });
      const { rows } = await bot.client.createTableRows({ table, rows: [{ item: 'x', price: 1, qty: 1 }] });
      assert.deepEqual([...(rows[0]?.stale ?? [])].sort(), ['summary', 'total']);
      await bot.client.updateTable({ table, schema: { total: null } });
      const { row } = await bot.client.getTableRow({ table, id: rows[0]?.id ?? 0 });
      assert.deepEqual(row.stale, ['summary']);
      assert.deepEqual(Object.keys(row.computed), ['summary']);
    });

    test('a computed column that names a missing dependency is refused', async () => {
      await rejectsWith(
        bot.client.createTable({ name: tableName('BadDeps'), schema: orderSchema('return 1', ['nope']) }),
        Error,
        /depends on "nope"/,
      );
    });

    test('search ranks rows by their searchable columns, with the filter, and forgets deleted rows', async () => {
      const table = tableName('Search');
      await bot.client.createTable({
        name: table,
        schema: {
          type: 'object',
          properties: {
            title: { type: 'string', 'x-zui': { searchable: true } },
            body: { type: 'string', 'x-zui': { searchable: true } },
            lang: { type: 'string' },
          },
        },
      });
      await bot.client.createTableRows({
        table,
        rows: [
          { title: 'Refund policy', body: 'Refunds are paid within 14 days of a return.', lang: 'en' },
          { title: 'Shipping', body: 'We ship worldwide; a refund of shipping is not possible.', lang: 'en' },
          { title: 'Opening hours', body: 'Open every day from nine to five.', lang: 'en' },
          { title: 'Remboursement', body: 'refund refund', lang: 'fr' },
        ],
      });
      const found = await bot.client.findTableRows({ table, search: 'refund policy' });
      assert.equal(found.rows[0]?.title, 'Refund policy');
      assert.equal(found.rows[0]?.similarity, 1);
      assert.ok(found.rows.every((r) => typeof r.similarity === 'number' && r.similarity <= 1));
      assert.ok(!found.rows.some((r) => r.title === 'Opening hours'));
      const french = await bot.client.findTableRows({ table, search: 'refund', filter: { lang: 'fr' } });
      assert.deepEqual(
        french.rows.map((r) => String(r.title)),
        ['Remboursement'],
      );
      await bot.client.deleteTableRows({ table, filter: { title: 'Refund policy' } });
      const after = await bot.client.findTableRows({ table, search: 'policy' });
      assert.deepEqual(after.rows, []);
    });

    test('rows added by an import and by a duplicate are searchable', async () => {
      const table = tableName('Imported');
      await bot.client.createTable({
        name: table,
        schema: { type: 'object', properties: { note: { type: 'string', 'x-zui': { searchable: true } } } },
      });
      const { file } = await bot.client.uploadFile({
        key: `${table}.csv`,
        content: 'note\n"parcel delayed by the storm"\n"parcel delivered"\n',
      });
      const { job } = await bot.client.importTable({ table, fileId: file.id });
      await jobCompleted(bot.client, table, job.id);
      const found = await bot.client.findTableRows({ table, search: 'storm' });
      assert.deepEqual(
        found.rows.map((r) => String(r.note)),
        ['parcel delayed by the storm'],
      );
      const { table: copy } = await bot.client.duplicateTable({
        sourceTableId: table,
        tableName: `${table}Copy`,
      });
      const inCopy = await bot.client.findTableRows({ table: copy.id, search: 'storm' });
      assert.equal(inCopy.rows.length, 1);
    });

    test('search on a table without searchable columns is InvalidQuery', async () => {
      const table = tableName('Plain');
      await bot.client.createTable({ name: table, schema: { a: 'x' } });
      await rejectsWith(bot.client.findTableRows({ table, search: 'x' }), InvalidQueryError, /searchable/);
    });
  });
}
