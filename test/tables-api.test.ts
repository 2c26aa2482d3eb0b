import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import {
  AlreadyExistsError,
  ForbiddenError,
  InvalidJsonSchemaError,
  InvalidQueryError,
  LimitExceededError,
  ResourceNotFoundError,
  isApiError,
} from '@botpress/client';
import type { Client } from '@botpress/client';
import { fileSettled } from './helpers/files.ts';
import {
  assertErrorBody,
  assertTimestamp,
  createTestBot,
  rawRuntime,
  rejects4xx,
  rejectsWith,
  unique,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import {
  allRows,
  assertSameRows,
  clientErrorProblem,
  columnsOf,
  downloadFile,
  insertRows,
  isGzip,
  jobCompleted,
  pick,
  rowIds,
  userColumns,
} from './helpers/tables.ts';

/** A JSON Schema with one column of each kind. */
const CATALOG_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', 'x-zui': { searchable: true } },
    price: { type: 'number' },
    active: { type: 'boolean' },
    due: { type: 'string', format: 'date-time' },
    meta: { type: 'object' },
    labels: { type: 'array', items: { type: 'string' } },
  },
};

const ROW_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    due: { type: 'string', format: 'date-time' },
    meta: { type: 'object' },
  },
};
const ROW_COLUMNS = ['name', 'price', 'due', 'meta'];

/** The find fixture: five products, one of them (4) null everywhere but name and status. */
const PRODUCTS_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    status: { type: 'string' },
    active: { type: 'boolean' },
    meta: { type: 'object' },
    labels: { type: 'array' },
    added: { type: 'string', format: 'date-time' },
  },
};
const PRODUCTS = [
  {
    name: 'Apple',
    price: 1.5,
    status: 'open',
    active: true,
    meta: { color: 'red', size: 3 },
    labels: ['fruit'],
    added: '2024-01-01T00:00:00.000Z',
  },
  {
    name: 'banana',
    price: 5,
    status: 'open',
    active: false,
    meta: { color: 'yellow', size: 5 },
    labels: ['fruit', 'long'],
    added: '2024-01-02T00:00:00.000Z',
  },
  {
    name: 'Cherry',
    price: 10,
    status: 'closed',
    active: true,
    meta: { color: 'red' },
    labels: [],
    added: '2024-01-03T00:00:00.000Z',
  },
  { name: 'date', price: null, status: 'closed', active: null, meta: null, labels: null, added: null },
  {
    name: 'Elder',
    price: 7,
    status: 'pending',
    active: true,
    meta: { color: 'black', size: 1 },
    labels: ['berry'],
    added: '2024-01-05T00:00:00.000Z',
  },
];

/** The round-trip table: every column type, text that CSV must quote, nulls, non-terminating decimals. */
const BIG_SCHEMA = {
  type: 'object',
  properties: {
    seq: { type: 'number' },
    label: { type: 'string' },
    amount: { type: 'number' },
    ratio: { type: 'number' },
    flag: { type: 'boolean' },
    when: { type: 'string', format: 'date-time' },
    info: { type: 'object' },
    list: { type: 'array' },
  },
};
const BIG_COLUMNS = Object.keys(BIG_SCHEMA.properties);
const BIG_ROWS = 10_000;
function bigRow(i: number): Record<string, unknown> {
  return {
    seq: i,
    label: `row ${i}, "quoted"${i % 10 === 0 ? '\nsecond line' : ''} é ✓`,
    amount: i % 11 === 0 ? null : i * 1.25 - 300,
    ratio: i / 7,
    flag: i % 13 === 0 ? null : i % 2 === 0,
    when: new Date(Date.UTC(2024, 0, 1) + i * 61_000).toISOString(),
    info: i % 17 === 0 ? null : { i, parity: i % 2 ? 'odd' : 'even', nested: { ok: true } },
    list: [i, `x${i}`],
  };
}

const JOB_STATUSES = ['pending', 'in_progress', 'finalizing', 'completed'];

for (const store of await testStores()) {
  describe(`Tables API: tables, rows, queries and jobs (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let n = 0;
    /** A table name no other test uses: `<base><n>Table`. */
    const tableName = (base: string) => `${base}${++n}Table`;
    const find = (table: string, input: Omit<Parameters<Client['findTableRows']>[0], 'table'>) =>
      bot.client.findTableRows({ table, ...input });

    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'tables-api');
    });
    after(() => t.close());

    describe('tables', () => {
      test('createTable with a JSON Schema: columns numbered by the server, the table record filled in', async () => {
        const name = tableName('Catalog');
        const { table } = await bot.client.createTable({
          name,
          schema: CATALOG_SCHEMA,
          tags: { team: 'shop' },
        });
        assert.equal(typeof table.id, 'string');
        assert.ok(table.id.length > 0);
        assert.notEqual(table.id, name);
        assert.equal(table.name, name);
        assert.equal(table.factor, 1);
        assert.equal(table.frozen, false);
        assert.equal(table.keyColumn ?? null, null);
        assert.deepEqual(table.tags, { team: 'shop' });
        assertTimestamp(table.createdAt, 'createdAt');
        assertTimestamp(table.updatedAt, 'updatedAt');
        assert.equal(table.schema.type, 'object');
        assert.equal(table.schema.additionalProperties, true);
        assert.deepEqual(columnsOf(table), {
          name: { type: 'string', index: 0 },
          price: { type: 'number', index: 1 },
          active: { type: 'boolean', index: 2 },
          due: { type: 'string', format: 'date-time', index: 3 },
          meta: { type: 'object', index: 4 },
          labels: { type: 'array', index: 5 },
        });
        assert.equal(table.schema.properties.name?.['x-zui'].searchable, true);
        assert.equal(table.schema.properties.labels?.items?.type, 'string');
        const got = await bot.client.getTable({ table: name });
        assert.deepEqual(got.table, table, 'getTable answers the record createTable did');
      });

      test('createTable with an example object: types inferred from the values', async () => {
        const { table } = await bot.client.createTable({
          name: tableName('Example'),
          schema: { name: 'x', age: 3 },
        });
        assert.deepEqual(columnsOf(table), {
          name: { type: 'string', index: 0 },
          age: { type: 'number', index: 1 },
        });
        assert.equal(table.schema.type, 'object');
        assert.equal(table.schema.additionalProperties, true);
        const { table: more } = await bot.client.createTable({
          name: tableName('Example'),
          schema: { ok: true, info: { a: 1 }, list: [1, 2] },
        });
        assert.deepEqual(columnsOf(more), {
          ok: { type: 'boolean', index: 0 },
          info: { type: 'object', index: 1 },
          list: { type: 'array', index: 2 },
        });
      });

      test('a taken name is 409 AlreadyExists', async () => {
        const name = tableName('Taken');
        await bot.client.createTable({ name, schema: { a: 'x' } });
        await rejectsWith(bot.client.createTable({ name, schema: { b: 1 } }), AlreadyExistsError);
        const res = await rawRuntime(t, bot, 'POST', '/v1/tables', { name, schema: { a: 'x' } });
        assertErrorBody(res, 409, 'AlreadyExists');
      });

      test('20 columns are allowed, 21 are 413 LimitExceeded', async () => {
        const columns = (count: number) =>
          Object.fromEntries(Array.from({ length: count }, (_, i) => [`col${i}`, { type: 'number' }]));
        const { table } = await bot.client.createTable({
          name: tableName('Wide'),
          schema: { type: 'object', properties: columns(20) },
        });
        assert.equal(Object.keys(table.schema.properties).length, 20);
        const name = tableName('TooWide');
        await rejectsWith(
          bot.client.createTable({ name, schema: { type: 'object', properties: columns(21) } }),
          LimitExceededError,
        );
        const res = await rawRuntime(t, bot, 'POST', '/v1/tables', {
          name,
          schema: { type: 'object', properties: columns(21) },
        });
        assertErrorBody(res, 413, 'LimitExceeded');
        await rejectsWith(bot.client.getTable({ table: name }), ResourceNotFoundError);
        // Adding a 21st column to a full table is refused the same way.
        await rejectsWith(
          bot.client.updateTable({ table: table.name, schema: { extra: { type: 'string' } } }),
          LimitExceededError,
        );
      });

      test('a bad schema is 400 InvalidJsonSchema, and creates nothing', async () => {
        const name = tableName('Bad');
        await rejectsWith(
          bot.client.createTable({
            name,
            schema: { type: 'object', properties: { bad: { type: 'nonsense' } } },
          }),
          InvalidJsonSchemaError,
        );
        await rejectsWith(
          bot.client.createTable({ name, schema: { type: 'object', properties: { bad: 'string' } } }),
          InvalidJsonSchemaError,
        );
        const res = await rawRuntime(t, bot, 'POST', '/v1/tables', {
          name,
          schema: { type: 'object', properties: { bad: { type: 'nonsense' } } },
        });
        assertErrorBody(res, 400, 'InvalidJsonSchema');
        await rejectsWith(bot.client.getTable({ table: name }), ResourceNotFoundError);
        await rejects4xx(bot.client.createTable({ name: '', schema: { a: 'x' } }));
      });

      test('getTable by name and by id answers the table and its row count', async () => {
        const name = tableName('Counted');
        const { table } = await bot.client.createTable({ name, schema: { a: 'x' } });
        await bot.client.createTableRows({ table: name, rows: [{ a: '1' }, { a: '2' }, { a: '3' }] });
        const byName = await bot.client.getTable({ table: name });
        assert.equal(byName.table.id, table.id);
        assert.equal(byName.rows, 3);
        assert.equal(byName.stale, 0);
        assert.equal(byName.indexing, 0);
        const byId = await bot.client.getTable({ table: table.id });
        assert.equal(byId.table.name, name);
        assert.equal(byId.rows, 3);
        // Every {table} route takes the id too.
        const { rows } = await bot.client.findTableRows({ table: table.id });
        assert.equal(rows.length, 3);
        await rejectsWith(bot.client.getTable({ table: tableName('Missing') }), ResourceNotFoundError);
      });

      test('another bot’s tables are 404, and its names are its own', async () => {
        const name = tableName('Private');
        const { table } = await bot.client.createTable({ name, schema: { a: 'x' } });
        await bot.client.createTableRows({ table: name, rows: [{ a: 'secret' }] });
        const other = await createTestBot(t, 'other');
        await rejectsWith(other.client.getTable({ table: name }), ResourceNotFoundError);
        await rejectsWith(other.client.getTable({ table: table.id }), ResourceNotFoundError);
        await rejectsWith(other.client.findTableRows({ table: table.id }), ResourceNotFoundError);
        await rejectsWith(other.client.getTableRow({ table: table.id, id: 1 }), ResourceNotFoundError);
        await rejectsWith(other.client.deleteTable({ table: table.id }), ResourceNotFoundError);
        await rejectsWith(
          other.client.createTableRows({ table: table.id, rows: [{ a: 'x' }] }),
          ResourceNotFoundError,
        );
        assert.deepEqual((await other.client.listTables({})).tables, []);
        const res = await rawRuntime(t, other, 'GET', `/v1/tables/${table.id}`);
        assertErrorBody(res, 404, 'ResourceNotFound');
        const { table: theirs } = await other.client.createTable({ name, schema: { b: 1 } });
        assert.notEqual(theirs.id, table.id);
        assert.equal((await bot.client.getTable({ table: name })).rows, 1);
      });

      test('getOrCreateTable creates once, then answers the existing table', async () => {
        const name = tableName('Lazy');
        const first = await bot.client.getOrCreateTable({
          table: name,
          schema: { a: 'x' },
          tags: { k: 'v' },
        });
        assert.equal(first.created, true);
        assert.equal(first.table.name, name);
        assert.deepEqual(first.table.tags, { k: 'v' });
        assert.deepEqual(columnsOf(first.table), { a: { type: 'string', index: 0 } });
        assert.equal(first.rows, 0);
        await bot.client.createTableRows({ table: name, rows: [{ a: 'one' }] });
        const second = await bot.client.getOrCreateTable({ table: name, schema: { a: 'x' } });
        assert.equal(second.created, false);
        assert.equal(second.table.id, first.table.id);
        assert.equal(second.rows, 1);
        assert.equal(second.stale, 0);
        assert.equal(second.indexing, 0);
      });

      test('listTables: every table of the bot, filtered by tag equality, without meta', async () => {
        const lister = await createTestBot(t, 'lister');
        const suite = unique('suite');
        const a = tableName('ListA');
        const b = tableName('ListB');
        const c = tableName('ListC');
        await lister.client.createTable({ name: a, schema: { x: 1 }, tags: { suite, kind: 'a' } });
        await lister.client.createTable({ name: b, schema: { x: 1 }, tags: { suite, kind: 'b' } });
        await lister.client.createTable({ name: c, schema: { x: 1 } });
        const names = async (tags?: Record<string, string>) =>
          (await lister.client.listTables(tags ? { tags } : {})).tables.map((tb) => tb.name).sort();
        assert.deepEqual(await names(), [a, b, c].sort());
        assert.deepEqual(await names({ suite }), [a, b].sort());
        assert.deepEqual(await names({ suite, kind: 'b' }), [b]);
        assert.deepEqual(await names({ suite: 'nope' }), []);
        const { tables } = await lister.client.listTables({ tags: { kind: 'a' } });
        assert.equal(tables[0]?.schema.properties.x?.type, 'number', 'tables come with their schema');
        const raw = await rawRuntime(t, lister, 'GET', `/v1/tables?tags.suite=${suite}`);
        assert.equal(raw.status, 200);
        const body = raw.body as Record<string, unknown>;
        assert.deepEqual(Object.keys(body), ['tables']);
        const bracket = await rawRuntime(t, lister, 'GET', `/v1/tables?tags[kind]=b`);
        assert.deepEqual(
          (bracket.body as { tables: { name: string }[] }).tables.map((tb) => tb.name),
          [b],
        );
      });
    });

    describe('updateTable, renameTableColumn, deleteTable', () => {
      test('updateTable renames (the old name is gone) and replaces tags', async () => {
        const name = tableName('Old');
        const { table } = await bot.client.createTable({ name, schema: { a: 'x' }, tags: { v: '1' } });
        await bot.client.createTableRows({ table: name, rows: [{ a: 'kept' }] });
        const newName = tableName('New');
        const { table: renamed } = await bot.client.updateTable({
          table: name,
          name: newName,
          tags: { v: '2' },
        });
        assert.equal(renamed.id, table.id);
        assert.equal(renamed.name, newName);
        assert.deepEqual(renamed.tags, { v: '2' });
        assertTimestamp(renamed.updatedAt);
        assert.equal((await bot.client.getTable({ table: newName })).rows, 1);
        await rejectsWith(bot.client.getTable({ table: name }), ResourceNotFoundError);
        // Renaming onto a taken name is refused.
        const other = tableName('Other');
        await bot.client.createTable({ name: other, schema: { a: 'x' } });
        await rejectsWith(bot.client.updateTable({ table: newName, name: other }), AlreadyExistsError);
        await rejectsWith(
          bot.client.updateTable({ table: tableName('Missing'), name: tableName('X') }),
          ResourceNotFoundError,
        );
      });

      test('updateTable adds columns (by example, by JSON Schema fragment) and removes one with null', async () => {
        const name = tableName('Grow');
        await bot.client.createTable({ name, schema: { a: 'x', b: 1 } });
        await bot.client.createTableRows({ table: name, rows: [{ a: 'one', b: 1 }] });
        const { table } = await bot.client.updateTable({
          table: name,
          schema: { color: 'red', score: { type: 'number' }, when: { type: 'string', format: 'date-time' } },
        });
        const cols = columnsOf(table);
        assert.deepEqual(Object.fromEntries(Object.entries(cols).map(([k, c]) => [k, c.type])), {
          a: 'string',
          b: 'number',
          color: 'string',
          score: 'number',
          when: 'string',
        });
        assert.equal(cols.when?.format, 'date-time');
        assert.equal(cols.a?.index, 0);
        assert.equal(cols.b?.index, 1);
        const indexes = Object.values(cols).map((c) => c.index);
        assert.equal(new Set(indexes).size, indexes.length, 'every column has an index of its own');
        const { rows } = await bot.client.createTableRows({
          table: name,
          rows: [{ a: 'two', b: 2, color: 'blue', score: 4.5, when: '2024-05-01T00:00:00Z' }],
        });
        assert.deepEqual(pick(rows[0], ['color', 'score', 'when']), {
          color: 'blue',
          score: 4.5,
          when: '2024-05-01T00:00:00.000Z',
        });
        const { row: old } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.deepEqual(pick(old, ['a', 'b', 'color', 'score']), {
          a: 'one',
          b: 1,
          color: null,
          score: null,
        });

        const { table: shrunk } = await bot.client.updateTable({ table: name, schema: { b: null } });
        assert.deepEqual(Object.keys(shrunk.schema.properties).sort(), ['a', 'color', 'score', 'when']);
        const { row } = await bot.client.getTableRow({ table: name, id: 2 });
        assert.equal('b' in row, false, 'the removed column is gone from rows');
        assert.equal(row.a, 'two');
        assert.equal(row.score, 4.5);
        // A removed column can be added again: it starts empty.
        await bot.client.updateTable({ table: name, schema: { b: 0 } });
        assert.equal((await bot.client.getTableRow({ table: name, id: 2 })).row.b ?? null, null);
      });

      test('updateTable changing a column’s type empties its values, and only its', async () => {
        const name = tableName('Retype');
        await bot.client.createTable({ name, schema: { a: 'x', n: 1 } });
        await bot.client.createTableRows({
          table: name,
          rows: [
            { a: 'one', n: 1 },
            { a: 'two', n: 2 },
          ],
        });
        const { table } = await bot.client.updateTable({ table: name, schema: { n: { type: 'string' } } });
        assert.equal(table.schema.properties.n?.type, 'string');
        const rows = await allRows(bot.client, name);
        assert.deepEqual(
          rows.map((r) => pick(r, ['a', 'n'])),
          [
            { a: 'one', n: null },
            { a: 'two', n: null },
          ],
        );
        const { rows: written } = await bot.client.createTableRows({
          table: name,
          rows: [{ n: 'text now' }],
        });
        assert.equal(written[0]?.n, 'text now');
        const { errors } = await bot.client.createTableRows({ table: name, rows: [{ n: 5 }] });
        assert.equal(errors?.length, 1, 'a number no longer fits the column');
      });

      test('a frozen table refuses schema changes and renames with 403 Forbidden', async () => {
        const name = tableName('Ice');
        await bot.client.createTable({ name, schema: { a: 'x' } });
        const { table } = await bot.client.updateTable({ table: name, frozen: true });
        assert.equal(table.frozen, true);
        await rejectsWith(bot.client.updateTable({ table: name, schema: { b: 1 } }), ForbiddenError);
        await rejectsWith(bot.client.updateTable({ table: name, name: tableName('Melted') }), ForbiddenError);
        await rejectsWith(
          bot.client.renameTableColumn({ table: name, name: 'a', newName: 'b' }),
          ForbiddenError,
        );
        const res = await rawRuntime(t, bot, 'PUT', `/v1/tables/${name}`, { schema: { b: 1 } });
        assertErrorBody(res, 403, 'Forbidden');
        assert.deepEqual(Object.keys((await bot.client.getTable({ table: name })).table.schema.properties), [
          'a',
        ]);
        const { table: created } = await bot.client.createTable({
          name: tableName('Frozen'),
          schema: { a: 'x' },
          frozen: true,
        });
        assert.equal(created.frozen, true);
        await bot.client.deleteTable({ table: created.name });
      });

      test('factor may rise, not fall', async () => {
        const name = tableName('Factor');
        const { table } = await bot.client.createTable({ name, schema: { a: 'x' }, factor: 2 });
        assert.equal(table.factor, 2);
        await rejects4xx(bot.client.updateTable({ table: name, factor: 1 }));
        assert.equal((await bot.client.getTable({ table: name })).table.factor, 2);
        const { table: raised } = await bot.client.updateTable({ table: name, factor: 3 });
        assert.equal(raised.factor, 3);
        await rejects4xx(bot.client.createTable({ name: tableName('F'), schema: { a: 'x' }, factor: 31 }));
        await rejects4xx(bot.client.createTable({ name: tableName('F'), schema: { a: 'x' }, factor: 0 }));
      });

      test('keyColumn: set, refused over duplicate values or an unknown column, removed with null', async () => {
        const name = tableName('Keyed');
        await bot.client.createTable({ name, schema: { sku: 'x', dup: 'x' } });
        await bot.client.createTableRows({
          table: name,
          rows: [
            { sku: 'A', dup: 'same' },
            { sku: 'B', dup: 'same' },
          ],
        });
        const { table } = await bot.client.updateTable({ table: name, keyColumn: 'sku' });
        assert.equal(table.keyColumn, 'sku');
        assert.equal((await bot.client.getTable({ table: name })).table.keyColumn, 'sku');
        await rejects4xx(bot.client.updateTable({ table: name, keyColumn: 'dup' }));
        await rejects4xx(bot.client.updateTable({ table: name, keyColumn: 'nope' }));
        assert.equal((await bot.client.getTable({ table: name })).table.keyColumn, 'sku');
        const { table: unkeyed } = await bot.client.updateTable({ table: name, keyColumn: null });
        assert.equal(unkeyed.keyColumn ?? null, null);
        // Without the key, duplicates are fine.
        const { errors } = await bot.client.createTableRows({ table: name, rows: [{ sku: 'A' }] });
        assert.deepEqual(errors ?? [], []);
        await rejects4xx(
          bot.client.createTable({ name: tableName('K'), schema: { a: 'x' }, keyColumn: 'nope' }),
        );
      });

      test('renameTableColumn: the values follow the column', async () => {
        const name = tableName('Cols');
        await bot.client.createTable({ name, schema: { age: 1, name: 'x' } });
        await bot.client.createTableRows({ table: name, rows: [{ age: 30, name: 'ann' }] });
        const { table } = await bot.client.renameTableColumn({ table: name, name: 'age', newName: 'years' });
        assert.deepEqual(columnsOf(table), {
          years: { type: 'number', index: 0 },
          name: { type: 'string', index: 1 },
        });
        const { row } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.deepEqual(userColumns(row), { years: 30, name: 'ann' });
        const { rows } = await find(name, { filter: { years: { $gte: 30 } } });
        assert.deepEqual(rowIds(rows), [1]);
        await rejects4xx(bot.client.renameTableColumn({ table: name, name: 'years', newName: 'name' }));
        await rejects4xx(bot.client.renameTableColumn({ table: name, name: 'nope', newName: 'other' }));
        await rejects4xx(
          bot.client.renameTableColumn({ table: name, name: 'years', newName: 'x'.repeat(31) }),
        );
        await rejectsWith(
          bot.client.renameTableColumn({ table: tableName('Missing'), name: 'a', newName: 'b' }),
          ResourceNotFoundError,
        );
      });

      test('deleteTable: then 404 everywhere', async () => {
        const name = tableName('Doomed');
        const { table } = await bot.client.createTable({ name, schema: { a: 'x' } });
        await bot.client.createTableRows({ table: name, rows: [{ a: 'x' }] });
        assert.deepEqual(await bot.client.deleteTable({ table: name }), {});
        await rejectsWith(bot.client.getTable({ table: name }), ResourceNotFoundError);
        await rejectsWith(bot.client.getTable({ table: table.id }), ResourceNotFoundError);
        await rejectsWith(bot.client.findTableRows({ table: name }), ResourceNotFoundError);
        await rejectsWith(bot.client.deleteTable({ table: name }), ResourceNotFoundError);
        // The name is free again, for a table that starts empty.
        const again = await bot.client.createTable({ name, schema: { a: 'x' } });
        assert.notEqual(again.table.id, table.id);
        assert.equal((await bot.client.getTable({ table: name })).rows, 0);
        await bot.client.deleteTable({ table: again.table.id });
        await rejectsWith(bot.client.getTable({ table: name }), ResourceNotFoundError);
      });
    });

    describe('rows', () => {
      test('createTableRows answers the rows: ids from 1, timestamps, computed {}, stale [], columns flattened', async () => {
        const name = tableName('Rows');
        await bot.client.createTable({ name, schema: ROW_SCHEMA });
        const res = await bot.client.createTableRows({
          table: name,
          rows: [{ name: 'a', price: 1.5, meta: { k: [1, 'two'], n: null } }, { name: 'b' }],
        });
        assert.deepEqual(res.errors ?? [], []);
        assert.deepEqual(res.warnings ?? [], []);
        assert.deepEqual(rowIds(res.rows), [1, 2]);
        for (const row of res.rows) {
          assertTimestamp(row.createdAt, 'createdAt');
          assertTimestamp(row.updatedAt, 'updatedAt');
          assert.deepEqual(row.computed, {});
          assert.deepEqual(row.stale, []);
        }
        assert.deepEqual(pick(res.rows[0], ROW_COLUMNS), {
          name: 'a',
          price: 1.5,
          due: null,
          meta: { k: [1, 'two'], n: null },
        });
        assert.deepEqual(pick(res.rows[1], ROW_COLUMNS), { name: 'b', price: null, due: null, meta: null });
        const { rows: next } = await bot.client.createTableRows({ table: name, rows: [{ name: 'c' }] });
        assert.deepEqual(rowIds(next), [3]);
        const { row } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.deepEqual(pick(row, ROW_COLUMNS), pick(res.rows[0], ROW_COLUMNS));
        assert.equal(row.createdAt, res.rows[0]?.createdAt);
        assert.deepEqual(row.computed, {});
        const raw = await rawRuntime(t, bot, 'POST', `/v1/tables/${name}/rows`, { rows: [{ name: 'd' }] });
        assert.equal(raw.status, 200);
      });

      test('unknown keys are ignored and named in warnings', async () => {
        const name = tableName('Warn');
        await bot.client.createTable({ name, schema: ROW_SCHEMA });
        const res = await bot.client.createTableRows({
          table: name,
          rows: [{ name: 'w', bogus: 1, extraKey: 'x' }],
        });
        assert.equal(res.rows.length, 1);
        assert.equal('bogus' in (res.rows[0] ?? {}), false);
        assert.ok(res.warnings && res.warnings.length > 0, 'warnings are given');
        assert.match(res.warnings.join('\n'), /bogus/);
        assert.match(res.warnings.join('\n'), /extraKey/);
        assert.deepEqual(res.errors ?? [], []);
        const { row } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.deepEqual(userColumns(row), { name: 'w' });
        const updated = await bot.client.updateTableRows({
          table: name,
          rows: [{ id: 1, price: 2, nope: 3 }],
        });
        assert.equal(updated.rows[0]?.price, 2);
        assert.match((updated.warnings ?? []).join('\n'), /nope/);
      });

      test('a wrong-typed row is reported in errors, the other rows written (200)', async () => {
        const name = tableName('Typed');
        await bot.client.createTable({ name, schema: ROW_SCHEMA });
        const raw = await rawRuntime(t, bot, 'POST', `/v1/tables/${name}/rows`, {
          rows: [
            { name: 'ok1', price: 1 },
            { name: 'bad', price: 'cheap' },
            { name: 'late', due: 'not a date' },
            { name: 'ok2', price: 2, meta: { a: 1 } },
            { name: 'wrongObject', meta: [1, 2] },
          ],
        });
        assert.equal(raw.status, 200, JSON.stringify(raw.body));
        const body = raw.body as { rows: { name: string }[]; errors?: string[] };
        assert.deepEqual(
          body.rows.map((r) => r.name),
          ['ok1', 'ok2'],
        );
        assert.equal(body.errors?.length, 3, JSON.stringify(body.errors));
        const errors = (body.errors ?? []).join('\n');
        assert.match(errors, /price/);
        assert.match(errors, /due/);
        assert.match(errors, /meta/);
        const { rows } = await find(name, {});
        assert.deepEqual(
          rows.map((r) => r.name as unknown),
          ['ok1', 'ok2'],
        );
        // nullable: false refuses a row without the value.
        const strict = tableName('Strict');
        await bot.client.createTable({
          name: strict,
          schema: {
            type: 'object',
            properties: { code: { type: 'string', nullable: false }, n: { type: 'number' } },
          },
        });
        const res = await bot.client.createTableRows({
          table: strict,
          rows: [{ n: 1 }, { code: 'x', n: 2 }],
        });
        assert.deepEqual(
          res.rows.map((r) => r.code as unknown),
          ['x'],
        );
        assert.match((res.errors ?? []).join('\n'), /code/);
      });

      test('a row over 4 KB × factor is 413 LimitExceeded', async () => {
        const small = tableName('Small');
        await bot.client.createTable({ name: small, schema: ROW_SCHEMA });
        await rejectsWith(
          bot.client.createTableRows({ table: small, rows: [{ name: 'x'.repeat(5000) }] }),
          LimitExceededError,
        );
        const raw = await rawRuntime(t, bot, 'POST', `/v1/tables/${small}/rows`, {
          rows: [{ name: 'x'.repeat(5000) }],
        });
        assertErrorBody(raw, 413, 'LimitExceeded');
        assert.equal((await bot.client.getTable({ table: small })).rows, 0);
        await bot.client.createTableRows({ table: small, rows: [{ name: 'short' }] });
        await rejectsWith(
          bot.client.updateTableRows({ table: small, rows: [{ id: 1, name: 'x'.repeat(5000) }] }),
          LimitExceededError,
        );
        const big = tableName('Big');
        await bot.client.createTable({ name: big, schema: ROW_SCHEMA, factor: 2 });
        const { rows } = await bot.client.createTableRows({ table: big, rows: [{ name: 'x'.repeat(5000) }] });
        assert.equal((rows[0]?.name as string).length, 5000);
        await rejectsWith(
          bot.client.createTableRows({ table: big, rows: [{ name: 'x'.repeat(9000) }] }),
          LimitExceededError,
        );
      });

      test('dates are stored as ISO 8601 UTC with milliseconds', async () => {
        const name = tableName('Dates');
        await bot.client.createTable({ name, schema: ROW_SCHEMA });
        const { rows } = await bot.client.createTableRows({
          table: name,
          rows: [
            { due: '2024-03-05T10:20:30+02:00' },
            { due: '2024-03-05' },
            { due: '2024-03-05T10:20:30.123456Z' },
          ],
        });
        assert.deepEqual(
          rows.map((r) => r.due as unknown),
          ['2024-03-05T08:20:30.000Z', '2024-03-05T00:00:00.000Z', '2024-03-05T10:20:30.123Z'],
        );
        const { row } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.equal(row.due, '2024-03-05T08:20:30.000Z');
        const { rows: updated } = await bot.client.updateTableRows({
          table: name,
          rows: [{ id: 2, due: '2024-12-31T23:00:00-05:00' }],
        });
        assert.equal(updated[0]?.due, '2025-01-01T04:00:00.000Z');
      });

      test('getTableRow: the row, or 404', async () => {
        const name = tableName('Get');
        await bot.client.createTable({ name, schema: ROW_SCHEMA });
        await bot.client.createTableRows({ table: name, rows: [{ name: 'a', price: 3 }] });
        const { row } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.equal(row.id, 1);
        assert.deepEqual(userColumns(row), { name: 'a', price: 3 });
        await rejectsWith(bot.client.getTableRow({ table: name, id: 999 }), ResourceNotFoundError);
        const raw = await rawRuntime(t, bot, 'GET', `/v1/tables/${name}/row?id=999`);
        assertErrorBody(raw, 404, 'ResourceNotFound');
        await rejectsWith(
          bot.client.getTableRow({ table: tableName('Missing'), id: 1 }),
          ResourceNotFoundError,
        );
      });

      test('updateTableRows changes only the given columns; unknown ids and bad values go to errors', async () => {
        const name = tableName('Update');
        await bot.client.createTable({ name, schema: ROW_SCHEMA });
        const { rows: created } = await bot.client.createTableRows({
          table: name,
          rows: [
            { name: 'a', price: 1, meta: { m: 1 } },
            { name: 'b', price: 2 },
          ],
        });
        const res = await bot.client.updateTableRows({ table: name, rows: [{ id: 1, price: 9 }] });
        assert.deepEqual(res.errors ?? [], []);
        assert.deepEqual(rowIds(res.rows), [1]);
        assert.deepEqual(pick(res.rows[0], ROW_COLUMNS), { name: 'a', price: 9, due: null, meta: { m: 1 } });
        assert.equal(res.rows[0]?.createdAt, created[0]?.createdAt);
        assert.ok(
          Date.parse(res.rows[0]?.updatedAt ?? '') >= Date.parse(created[0]?.updatedAt ?? ''),
          'updatedAt moves forward',
        );
        const { row } = await bot.client.getTableRow({ table: name, id: 1 });
        assert.deepEqual(pick(row, ROW_COLUMNS), { name: 'a', price: 9, due: null, meta: { m: 1 } });
        const cleared = await bot.client.updateTableRows({ table: name, rows: [{ id: 1, meta: null }] });
        assert.equal(cleared.rows[0]?.meta ?? null, null);
        assert.equal(cleared.rows[0]?.name, 'a');

        const mixed = await bot.client.updateTableRows({
          table: name,
          rows: [
            { id: 2, name: 'B' },
            { id: 999, name: 'z' },
            { id: 1, price: 'nine' },
          ],
        });
        assert.deepEqual(rowIds(mixed.rows), [2]);
        assert.equal(mixed.errors?.length, 2, JSON.stringify(mixed.errors));
        assert.match((mixed.errors ?? []).join('\n'), /999/);
        assert.equal((await bot.client.getTableRow({ table: name, id: 1 })).row.price, 9);
        assert.equal((await bot.client.getTable({ table: name })).rows, 2, 'no row was created');
      });

      test('upsertTableRows on a keyColumn: inserted and updated', async () => {
        const name = tableName('Upsert');
        const { table } = await bot.client.createTable({
          name,
          schema: { sku: 'x', qty: 1 },
          keyColumn: 'sku',
        });
        assert.equal(table.keyColumn, 'sku');
        await bot.client.createTableRows({
          table: name,
          rows: [
            { sku: 'A', qty: 1 },
            { sku: 'B', qty: 2 },
          ],
        });
        const res = await bot.client.upsertTableRows({
          table: name,
          keyColumn: 'sku',
          rows: [
            { sku: 'A', qty: 10 },
            { sku: 'C', qty: 3 },
          ],
        });
        assert.deepEqual(res.errors ?? [], []);
        assert.deepEqual(
          res.updated.map((r) => ({ id: r.id, ...pick(r, ['sku', 'qty']) })),
          [{ id: 1, sku: 'A', qty: 10 }],
        );
        assert.deepEqual(
          res.inserted.map((r) => ({ id: r.id, ...pick(r, ['sku', 'qty']) })),
          [{ id: 3, sku: 'C', qty: 3 }],
        );
        // Matching on id: a partial update keeps the other columns.
        const byId = await bot.client.upsertTableRows({
          table: name,
          keyColumn: 'id',
          rows: [
            { id: 2, qty: 20 },
            { sku: 'D', qty: 4 },
          ],
        });
        assert.deepEqual(
          byId.updated.map((r) => ({ id: r.id, ...pick(r, ['sku', 'qty']) })),
          [{ id: 2, sku: 'B', qty: 20 }],
        );
        assert.deepEqual(
          byId.inserted.map((r) => pick(r, ['sku', 'qty'])),
          [{ sku: 'D', qty: 4 }],
        );
        const all = await allRows(bot.client, name);
        assert.deepEqual(
          all.map((r) => pick(r, ['sku', 'qty'])),
          [
            { sku: 'A', qty: 10 },
            { sku: 'B', qty: 20 },
            { sku: 'C', qty: 3 },
            { sku: 'D', qty: 4 },
          ],
        );
        // The key column's values are unique: a second 'A' is refused (whole call or that row).
        const refused = await bot.client.createTableRows({ table: name, rows: [{ sku: 'A', qty: 0 }] }).then(
          (dup) => (dup.errors?.length ?? 0) > 0,
          (err: unknown) => isApiError(err) && err.code >= 400 && err.code < 500,
        );
        assert.ok(refused, 'a duplicate key is refused (a 4xx, or the row in errors)');
        const { rows: withA } = await find(name, { filter: { sku: 'A' } });
        assert.equal(withA.length, 1);
      });

      test('deleteTableRows by ids, by filter, and all; ids are never reused', async () => {
        const name = tableName('Delete');
        await bot.client.createTable({ name, schema: { price: 1 } });
        await insertRows(
          bot.client,
          name,
          [1, 2, 3, 4, 5, 6].map((price) => ({ price })),
        );
        assert.deepEqual(await bot.client.deleteTableRows({ table: name, ids: [1, 2] }), { deletedRows: 2 });
        assert.deepEqual((await bot.client.deleteTableRows({ table: name, ids: [1, 999] })).deletedRows, 0);
        const byFilter = await bot.client.deleteTableRows({ table: name, filter: { price: { $gt: 4 } } });
        if (byFilter.job) await jobCompleted(bot.client, name, byFilter.job.id);
        else assert.equal(byFilter.deletedRows, 2);
        assert.deepEqual(rowIds(await allRows(bot.client, name)), [3, 4]);
        const { rows } = await bot.client.createTableRows({ table: name, rows: [{ price: 7 }] });
        assert.deepEqual(rowIds(rows), [7], 'ids are not reused');
        assert.deepEqual(await bot.client.deleteTableRows({ table: name, deleteAllRows: true }), {
          deletedRows: 3,
        });
        assert.equal((await bot.client.getTable({ table: name })).rows, 0);
        assert.deepEqual(await allRows(bot.client, name), []);
        await rejects4xx(bot.client.deleteTableRows({ table: name, ids: [1], deleteAllRows: true }));
        await rejects4xx(bot.client.deleteTableRows({ table: name }));
        await rejectsWith(
          bot.client.deleteTableRows({ table: name, filter: { nope: 1 } }),
          InvalidQueryError,
          /nope/,
        );
      });
    });

    describe('findTableRows', () => {
      let products: string;
      before(async () => {
        products = tableName('Products');
        await bot.client.createTable({ name: products, schema: PRODUCTS_SCHEMA });
        await insertRows(bot.client, products, PRODUCTS);
      });
      const ids = async (input: Omit<Parameters<Client['findTableRows']>[0], 'table'>) =>
        rowIds((await find(products, input)).rows);
      const matching = (filter: Record<string, unknown>) => ids({ filter });

      test('filters: equality, comparisons, $in, $or, $not, dot paths, $regex, $exists', async () => {
        assert.deepEqual(await matching({ status: 'open' }), [1, 2], 'bare equality');
        assert.deepEqual(await matching({ status: 'open', active: true }), [1], 'fields ANDed');
        assert.deepEqual(await matching({ price: { $gt: 5 } }), [3, 5]);
        assert.deepEqual(await matching({ price: { $gte: 5, $lt: 10 } }), [2, 5], 'operators ANDed');
        assert.deepEqual(await matching({ status: { $in: ['closed', 'pending'] } }), [3, 4, 5]);
        assert.deepEqual(await matching({ status: { $nin: ['open'] } }), [3, 4, 5]);
        assert.deepEqual(await matching({ $or: [{ price: { $lt: 2 } }, { status: 'pending' }] }), [1, 5]);
        assert.deepEqual(
          await matching({ $and: [{ active: true }, { $or: [{ status: 'closed' }, { price: 7 }] }] }),
          [3, 5],
        );
        assert.deepEqual(await matching({ $not: { status: 'open' } }), [3, 4, 5]);
        assert.deepEqual(await matching({ $not: { price: { $gt: 5 } } }), [1, 2, 4], 'null price: $gt false');
        assert.deepEqual(await matching({ price: { $ne: 5 } }), [1, 3, 4, 5], '$ne is true on null');
        assert.deepEqual(await matching({ 'meta.color': 'red' }), [1, 3], 'dot path');
        assert.deepEqual(await matching({ 'meta.size': { $gte: 3 } }), [1, 2]);
        assert.deepEqual(await matching({ 'meta.size': '3' }), [], '"3" never equals 3');
        assert.deepEqual(await matching({ name: { $regex: '^[a-c]', $options: 'i' } }), [1, 2, 3]);
        assert.deepEqual(await matching({ name: { $regex: '^[a-c]' } }), [2], 'case-sensitive by default');
        assert.deepEqual(await matching({ price: { $exists: false } }), [4]);
        assert.deepEqual(await matching({ meta: { $exists: true } }), [1, 2, 3, 5]);
        assert.deepEqual(await matching({ price: { $eq: null } }), [4]);
        assert.deepEqual(await matching({ labels: { $size: 2 } }), [2]);
        assert.deepEqual(await matching({ price: { $mod: [5, 0] } }), [2, 3]);
        assert.deepEqual(await matching({ id: { $lte: 2 } }), [1, 2], 'system column id');
        assert.deepEqual(
          await matching({ added: { $gte: '2024-01-03T01:00:00+01:00' } }),
          [3, 5],
          'dates compare as instants',
        );
        assert.deepEqual(
          await matching({ createdAt: { $lte: new Date(Date.now() + 60_000).toISOString() } }),
          [1, 2, 3, 4, 5],
        );
      });

      test('bad filters are 400 InvalidQuery naming the problem', async () => {
        await rejectsWith(find(products, { filter: { price: { gte: 5 } } }), InvalidQueryError, /gte/);
        await rejectsWith(find(products, { filter: { colour: 'red' } }), InvalidQueryError, /colour/);
        await rejectsWith(find(products, { filter: { price: { $gt: 'five' } } }), InvalidQueryError);
        await rejectsWith(find(products, { filter: { status: { $in: [] } } }), InvalidQueryError);
        await rejectsWith(
          find(products, { filter: { name: { $regex: '(a)\\1' } } }),
          InvalidQueryError,
          /back-references/,
        );
        await rejectsWith(find(products, { filter: { $bogus: [] } }), InvalidQueryError);
        const raw = await rawRuntime(t, bot, 'POST', `/v1/tables/${products}/rows/find`, {
          filter: { price: { gte: 5 } },
        });
        assertErrorBody(raw, 400, 'InvalidQuery');
      });

      test('orderBy and orderDirection: nulls last ascending, first descending, ties by id', async () => {
        assert.deepEqual(await ids({ orderBy: 'price' }), [1, 2, 5, 3, 4]);
        assert.deepEqual(await ids({ orderBy: 'price', orderDirection: 'asc' }), [1, 2, 5, 3, 4]);
        assert.deepEqual(await ids({ orderBy: 'price', orderDirection: 'desc' }), [4, 3, 5, 2, 1]);
        assert.deepEqual(await ids({ orderBy: 'name' }), [1, 3, 5, 2, 4], 'binary string order');
        assert.deepEqual(await ids({ orderBy: 'status' }), [3, 4, 1, 2, 5], 'ties by id');
        assert.deepEqual(await ids({}), [1, 2, 3, 4, 5], 'by id by default');
        assert.deepEqual(await ids({ orderBy: 'id', orderDirection: 'desc' }), [5, 4, 3, 2, 1]);
        assert.deepEqual(await ids({ orderBy: 'added', orderDirection: 'desc' }), [4, 5, 3, 2, 1]);
        await rejectsWith(find(products, { orderBy: 'nope' }), InvalidQueryError);
      });

      test('limit, offset, hasMore, and the echoed offset and limit', async () => {
        const first = await find(products, { limit: 2 });
        assert.deepEqual(rowIds(first.rows), [1, 2]);
        assert.equal(first.hasMore, true);
        assert.equal(first.offset, 0);
        assert.equal(first.limit, 2);
        const middle = await find(products, { limit: 2, offset: 2 });
        assert.deepEqual(rowIds(middle.rows), [3, 4]);
        assert.equal(middle.hasMore, true);
        assert.equal(middle.offset, 2);
        const last = await find(products, { limit: 2, offset: 3 });
        assert.deepEqual(rowIds(last.rows), [4, 5]);
        assert.equal(last.hasMore, false);
        const beyond = await find(products, { offset: 10 });
        assert.deepEqual(beyond.rows, []);
        assert.equal(beyond.hasMore, false);
        const defaults = await find(products, {});
        assert.equal(defaults.limit, 100);
        assert.equal(defaults.offset, 0);
        assert.equal(defaults.hasMore, false);
        const filtered = await find(products, { filter: { active: true }, limit: 1, offset: 1 });
        assert.deepEqual(rowIds(filtered.rows), [3]);
        assert.equal(filtered.hasMore, true);
      });

      test('select returns the listed columns besides the system fields', async () => {
        const { rows } = await find(products, { select: ['name', 'price'], limit: 1 });
        const [row] = rows;
        assert.ok(row);
        assert.equal(row.id, 1);
        assertTimestamp(row.createdAt);
        assert.equal(row.name, 'Apple');
        assert.equal(row.price, 1.5);
        for (const column of ['status', 'active', 'meta', 'labels', 'added']) {
          assert.equal(column in row, false, `${column} is not selected`);
        }
        await rejectsWith(find(products, { select: ['nope'] }), InvalidQueryError);
      });

      test('$regex answers alike on both stores: case folding beyond ASCII, "." and newlines, \\b', async () => {
        // The server checks patterns in RE2's syntax (docs/tables.md): they mean the same on every store.
        const name = tableName('Regex');
        await bot.client.createTable({ name, schema: { text: 'x', info: { city: 'x' } } });
        await insertRows(bot.client, name, [
          { text: 'Émile', info: { city: 'Évry' } },
          { text: 'éric', info: { city: 'évian' } },
          { text: 'cat food' },
          { text: 'concat' },
          { text: 'a\nb' },
        ]);
        const cases: [string, Record<string, unknown>, number[]][] = [
          ['é matches É ignoring case', { text: { $regex: '^é', $options: 'i' } }, [1, 2]],
          ['É matches é ignoring case', { text: { $regex: '^É', $options: 'i' } }, [1, 2]],
          ['case-sensitive by default', { text: { $regex: '^é' } }, [2]],
          ['ignoring case in a dot path', { 'info.city': { $regex: '^é', $options: 'i' } }, [1, 2]],
          ['"." does not match a newline', { text: { $regex: 'a.b' } }, []],
          ['\\b is a word boundary', { text: { $regex: '\\bcat' } }, [3]],
        ];
        const wrong: string[] = [];
        for (const [what, filter, expected] of cases) {
          const got = rowIds((await find(name, { filter })).rows);
          if (JSON.stringify(got) !== JSON.stringify(expected)) {
            wrong.push(
              `${what}: ${JSON.stringify(filter)} gave ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`,
            );
          }
        }
        assert.deepEqual(wrong, []);
      });

      test('group: key, count, sum, avg, max, min, unique as <column><Op>, ordered by key', async () => {
        const { rows } = await find(products, {
          group: {
            status: 'key',
            price: ['sum', 'avg', 'max', 'min', 'count'],
            name: 'unique',
            added: ['max', 'min'],
          },
        });
        const fields = [
          'statusKey',
          'priceSum',
          'priceAvg',
          'priceMax',
          'priceMin',
          'priceCount',
          'nameUnique',
          'addedMax',
          'addedMin',
        ];
        assert.deepEqual(
          rows.map((r) => pick(r, fields)),
          [
            {
              statusKey: 'closed',
              priceSum: 10,
              priceAvg: 10,
              priceMax: 10,
              priceMin: 10,
              priceCount: 1,
              nameUnique: ['Cherry', 'date'],
              addedMax: '2024-01-03T00:00:00.000Z',
              addedMin: '2024-01-03T00:00:00.000Z',
            },
            {
              statusKey: 'open',
              priceSum: 6.5,
              priceAvg: 3.25,
              priceMax: 5,
              priceMin: 1.5,
              priceCount: 2,
              nameUnique: ['Apple', 'banana'],
              addedMax: '2024-01-02T00:00:00.000Z',
              addedMin: '2024-01-01T00:00:00.000Z',
            },
            {
              statusKey: 'pending',
              priceSum: 7,
              priceAvg: 7,
              priceMax: 7,
              priceMin: 7,
              priceCount: 1,
              nameUnique: ['Elder'],
              addedMax: '2024-01-05T00:00:00.000Z',
              addedMin: '2024-01-05T00:00:00.000Z',
            },
          ],
        );
        const { rows: whole } = await find(products, { group: { price: ['sum', 'count', 'avg'] } });
        assert.deepEqual(
          whole.map((r) => pick(r, ['priceSum', 'priceCount', 'priceAvg'])),
          [{ priceSum: 23.5, priceCount: 4, priceAvg: 5.875 }],
          'no key: one row',
        );
        const { rows: active } = await find(products, {
          filter: { active: true },
          group: { status: 'key', price: 'count' },
        });
        assert.deepEqual(
          active.map((r) => pick(r, ['statusKey', 'priceCount'])),
          [
            { statusKey: 'closed', priceCount: 1 },
            { statusKey: 'open', priceCount: 1 },
            { statusKey: 'pending', priceCount: 1 },
          ],
          'group after filter',
        );
        await rejectsWith(find(products, { group: { price: 'median' } }), InvalidQueryError);
        await rejectsWith(find(products, { group: { name: 'sum' } }), InvalidQueryError);
        await rejectsWith(find(products, { group: { nope: 'key' } }), InvalidQueryError);
      });
    });

    describe('jobs: export, import, duplicate', () => {
      test('exportTable to CSV, uncompressed: a job, completed in getTableJobs, its output a Files API file', async () => {
        const name = tableName('Export');
        const { table } = await bot.client.createTable({ name, schema: { name: 'x', age: 1 } });
        await bot.client.createTableRows({
          table: name,
          rows: [
            { name: 'ann', age: 3 },
            { name: 'bob', age: 4 },
          ],
        });
        const { job } = await bot.client.exportTable({ table: name, format: 'csv', compress: false });
        assert.equal(typeof job.id, 'string');
        assert.equal(job.type, 'export');
        assert.equal(job.botId, bot.botId);
        assert.equal(job.tableId, table.id);
        assert.ok(JOB_STATUSES.includes(job.status), job.status);
        assert.equal(job.inputFileId, null);
        assertTimestamp(job.createdAt);
        assertTimestamp(job.updatedAt);
        const done = await jobCompleted(bot.client, name, job.id);
        assert.equal(typeof done.outputFileId, 'string');
        const { file } = await bot.client.getFile({ id: done.outputFileId ?? '' });
        assert.equal(file.status, 'upload_completed');
        const bytes = await downloadFile(bot.client, file.id);
        assert.equal(isGzip(bytes), false, 'compress: false');
        const lines = bytes.toString('utf8').trim().split(/\r?\n/);
        assert.equal(lines.length, 3, 'a header and two rows');
        const header = (lines[0] ?? '').split(',').map((h) => h.replace(/"/g, ''));
        assert.ok(header.includes('name') && header.includes('age'), `header ${lines[0]}`);
        assert.match(lines[1] ?? '', /ann/);
        assert.match(lines[1] ?? '', /\b3\b/);
        assert.match(lines[2] ?? '', /bob/);
        // Jobs of a table are the table's.
        const { jobs } = await bot.client.getTableJobs({ table: table.id });
        assert.ok(jobs.some((j) => j.id === job.id && j.type === 'export' && j.status === 'completed'));
        const other = tableName('NoJobs');
        await bot.client.createTable({ name: other, schema: { a: 'x' } });
        assert.deepEqual((await bot.client.getTableJobs({ table: other })).jobs, []);
        await rejectsWith(bot.client.getTableJobs({ table: tableName('Missing') }), ResourceNotFoundError);
      });

      test('exportTable to JSON: gzip by default', async () => {
        const name = tableName('ExportJson');
        await bot.client.createTable({ name, schema: { name: 'x', age: 1 } });
        await bot.client.createTableRows({ table: name, rows: [{ name: 'carl', age: 5 }] });
        const { job } = await bot.client.exportTable({ table: name, format: 'json' });
        assert.equal(job.type, 'export');
        const done = await jobCompleted(bot.client, name, job.id);
        const bytes = await downloadFile(bot.client, done.outputFileId ?? '');
        assert.ok(isGzip(bytes), 'compress defaults to true: gzip');
        const text = gunzipSync(bytes).toString('utf8');
        assert.doesNotThrow(() => JSON.parse(text), 'the export is JSON');
        assert.match(text, /carl/);
        await rejects4xx(bot.client.exportTable({ table: name, format: 'xml' as 'csv' }));
        await rejectsWith(
          bot.client.exportTable({ table: tableName('Missing'), format: 'json' }),
          ResourceNotFoundError,
        );
      });

      test('importTable from an uploaded CSV file: the rows are added to the existing ones', async () => {
        const name = tableName('Import');
        const { table } = await bot.client.createTable({ name, schema: { name: 'x', age: 1 } });
        await bot.client.createTableRows({ table: name, rows: [{ name: 'zed', age: 9 }] });
        const { file } = await bot.client.uploadFile({
          key: `${unique('import')}.csv`,
          content: 'name,age\nann,3\n"b, ""ob""",4\n',
        });
        await fileSettled(bot.client, file.id, ['upload_completed']);
        const { job } = await bot.client.importTable({ table: name, fileId: file.id });
        assert.equal(job.type, 'import');
        assert.equal(job.tableId, table.id);
        assert.equal(job.inputFileId, file.id);
        await jobCompleted(bot.client, name, job.id);
        const rows = await allRows(bot.client, name);
        assert.deepEqual(
          rows.map((r) => pick(r, ['name', 'age'])),
          [
            { name: 'zed', age: 9 },
            { name: 'ann', age: 3 },
            { name: 'b, "ob"', age: 4 },
          ],
        );
        await rejectsWith(
          bot.client.importTable({ table: name, fileId: 'file_01JZZZZZZZZZZZZZZZZZZZZZZZ' }),
          ResourceNotFoundError,
        );
        await rejectsWith(
          bot.client.importTable({ table: tableName('Missing'), fileId: file.id }),
          ResourceNotFoundError,
        );
      });

      describe('a round trip of 10,000 rows', () => {
        let source: string;
        let expected: Record<string, unknown>[];
        before(async () => {
          source = tableName('Big');
          await bot.client.createTable({ name: source, schema: BIG_SCHEMA });
          await insertRows(
            bot.client,
            source,
            Array.from({ length: BIG_ROWS }, (_, i) => bigRow(i)),
          );
          expected = Array.from({ length: BIG_ROWS }, (_, i) => pick(bigRow(i), BIG_COLUMNS));
        });

        const roundTrip = async (input: { format: 'csv' | 'json'; compress?: boolean }) => {
          assert.equal((await bot.client.getTable({ table: source })).rows, BIG_ROWS);
          const { job } = await bot.client.exportTable({ table: source, ...input });
          const done = await jobCompleted(bot.client, source, job.id);
          const bytes = await downloadFile(bot.client, done.outputFileId ?? '');
          assert.equal(isGzip(bytes), input.compress !== false);
          const target = tableName(`Imported${input.format}`);
          await bot.client.createTable({ name: target, schema: BIG_SCHEMA });
          const { job: imported } = await bot.client.importTable({
            table: target,
            fileId: done.outputFileId ?? '',
          });
          await jobCompleted(bot.client, target, imported.id);
          assert.equal((await bot.client.getTable({ table: target })).rows, BIG_ROWS);
          const rows = await allRows(bot.client, target);
          assertSameRows(
            rows.map((r) => pick(r, BIG_COLUMNS)),
            expected,
            `${input.format} round trip`,
          );
        };

        test('the source holds what was written', async () => {
          const rows = await allRows(bot.client, source);
          assertSameRows(
            rows.map((r) => pick(r, BIG_COLUMNS)),
            expected,
            'source',
          );
        });

        test('CSV (uncompressed): export, import into a fresh table, the same rows', async () => {
          await roundTrip({ format: 'csv', compress: false });
        });

        test('JSON (gzipped): export, import into a fresh table, the same rows', async () => {
          await roundTrip({ format: 'json' });
        });
      });

      test('duplicateTable: with the rows, or the schema only; a new factor', async () => {
        const name = tableName('Original');
        const { table } = await bot.client.createTable({ name, schema: ROW_SCHEMA, tags: { t: '1' } });
        const written = [
          { name: 'a', price: 1, meta: { x: [1] } },
          { name: 'b', due: '2024-01-01T00:00:00.000Z' },
          { name: 'c', price: 3 },
        ];
        await insertRows(bot.client, name, written);
        const copyName = tableName('Copy');
        const res = await bot.client.duplicateTable({ sourceTableId: table.id, tableName: copyName });
        assert.equal(res.table.name, copyName);
        assert.notEqual(res.table.id, table.id);
        assert.equal(res.rows, 3);
        assert.equal(res.table.factor, 1);
        assert.deepEqual(columnsOf(res.table), columnsOf(table));
        if (res.job) await jobCompleted(bot.client, copyName, res.job.id);
        const copied = await allRows(bot.client, copyName);
        assert.deepEqual(
          copied.map((r) => pick(r, ROW_COLUMNS)),
          written.map((r) => pick(r, ROW_COLUMNS)),
        );
        // The copy is a table of its own.
        await bot.client.createTableRows({ table: copyName, rows: [{ name: 'd' }] });
        assert.equal((await bot.client.getTable({ table: name })).rows, 3);
        assert.equal((await bot.client.getTable({ table: copyName })).rows, 4);

        const emptyName = tableName('Shape');
        const empty = await bot.client.duplicateTable({
          sourceTableId: table.id,
          tableName: emptyName,
          schemaOnly: true,
          factor: 3,
        });
        assert.equal(empty.table.factor, 3);
        assert.deepEqual(columnsOf(empty.table), columnsOf(table));
        if (empty.job) await jobCompleted(bot.client, emptyName, empty.job.id);
        assert.equal((await bot.client.getTable({ table: emptyName })).rows, 0);

        await rejectsWith(
          bot.client.duplicateTable({ sourceTableId: table.id, tableName: copyName }),
          AlreadyExistsError,
        );
        await rejectsWith(
          bot.client.duplicateTable({ sourceTableId: 'table_missing', tableName: tableName('X') }),
          ResourceNotFoundError,
        );
      });
    });

    describe('bad input', () => {
      let name: string;
      before(async () => {
        name = tableName('Malformed');
        await bot.client.createTable({ name, schema: { a: 'x', price: 1 } });
        await bot.client.createTableRows({ table: name, rows: [{ a: 'x', price: 1 }] });
      });

      test('text with NUL characters and extreme numbers: stored or refused with a 4xx, never a 5xx', async () => {
        const problems: string[] = [];
        const check = async (what: string, method: string, path: string, body: unknown) => {
          const res = await rawRuntime(t, bot, method, path, body);
          if (res.status === 200) return res;
          const problem = clientErrorProblem(res);
          if (problem) problems.push(`${what}: ${problem}`);
          return res;
        };
        const nulTable = tableName('Nul');
        await bot.client.createTable({ name: nulTable, schema: { a: 'x', o: { k: 'x' } } });
        const rows = `/v1/tables/${nulTable}/rows`;
        const written = await check('a NUL in a string value', 'POST', rows, { rows: [{ a: 'x\u0000y' }] });
        // Refused, as Postgres cannot keep it: reported in the answer's errors, and nothing written.
        assert.equal(written.status, 200);
        assert.match(String((written.body as { errors?: string[] }).errors?.[0]), /NUL/);
        assert.equal((await bot.client.getTable({ table: nulTable })).rows, 0);
        await check('a NUL in an object value', 'POST', rows, { rows: [{ o: { k: 'x\u0000y' } }] });
        await check('a NUL in an object key', 'POST', rows, { rows: [{ o: { 'k\u0000': 1 } }] });
        await check('a NUL in an update', 'PUT', rows, { rows: [{ id: 1, a: 'z\u0000' }] });
        await check('a NUL in an upsert', 'POST', `${rows}/upsert`, {
          rows: [{ a: 'u\u0000' }],
          keyColumn: 'a',
        });
        const findPath = `${rows}/find`;
        await check('a NUL in an equality', 'POST', findPath, { filter: { a: 'x\u0000y' } });
        await check('a NUL in $in', 'POST', findPath, { filter: { a: { $in: ['x\u0000y'] } } });
        await check('a NUL in $regex', 'POST', findPath, { filter: { a: { $regex: 'x\u0000' } } });
        await check('a NUL in a dot-path operand', 'POST', findPath, { filter: { 'o.k': 'x\u0000y' } });
        await check('an id beyond int32', 'POST', `/v1/tables/${name}/rows/find`, {
          filter: { id: { $gt: 2 ** 40 } },
        });
        await check('an id beyond int32 in $in', 'POST', `/v1/tables/${name}/rows/find`, {
          filter: { id: { $in: [2 ** 40] } },
        });
        await check('a $mod by a subnormal divisor', 'POST', `/v1/tables/${name}/rows/find`, {
          filter: { price: { $mod: [1e-320, 0] } },
        });
        await check('a number compared with 1e308', 'POST', `/v1/tables/${name}/rows/find`, {
          filter: { price: { $lt: -1e308 } },
        });
        assert.deepEqual(problems, [], 'no 5xx');
      });

      test('malformed bodies and queries answer 4xx with the error body, never 5xx', async () => {
        const cases: [string, string, unknown?][] = [
          ['POST', `/v1/tables/${name}/rows/find`, { filter: 'x' }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: [1, 2] }],
          ['POST', `/v1/tables/${name}/rows/find`, { limit: 0 }],
          ['POST', `/v1/tables/${name}/rows/find`, { limit: 1001 }],
          ['POST', `/v1/tables/${name}/rows/find`, { offset: -1 }],
          ['POST', `/v1/tables/${name}/rows/find`, { limit: 'ten' }],
          ['POST', `/v1/tables/${name}/rows/find`, { group: { a: 'nope' } }],
          ['POST', `/v1/tables/${name}/rows/find`, { group: 'a' }],
          ['POST', `/v1/tables/${name}/rows/find`, { orderBy: 5 }],
          ['POST', `/v1/tables/${name}/rows/find`, { orderDirection: 'sideways' }],
          ['POST', `/v1/tables/${name}/rows/find`, { select: 'a' }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { $and: [] } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { $or: {} } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { $not: [] } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { price: { $mod: [0, 1] } } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { price: { $mod: 'x' } } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { a: { $regex: 5 } } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { a: { $regex: '(' } } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { 'a.b.c': 1 } }],
          ['POST', `/v1/tables/${name}/rows/find`, { filter: { price: { $in: 'x' } } }],
          ['POST', `/v1/tables/${name}/rows/find`, { search: 'x'.repeat(1025) }],
          ['POST', `/v1/tables/${name}/rows/find`, '{"filter":'],
          ['POST', `/v1/tables/${name}/rows`, { rows: [] }],
          ['POST', `/v1/tables/${name}/rows`, { rows: 'x' }],
          ['POST', `/v1/tables/${name}/rows`, { rows: [1, 2] }],
          ['POST', `/v1/tables/${name}/rows`, {}],
          ['POST', `/v1/tables/${name}/rows`, { rows: Array.from({ length: 1001 }, () => ({ a: 'x' })) }],
          ['PUT', `/v1/tables/${name}/rows`, { rows: [{ price: 1 }] }],
          ['PUT', `/v1/tables/${name}/rows`, { rows: [{ id: 'one', price: 1 }] }],
          ['PUT', `/v1/tables/${name}/rows`, { rows: [{ id: 2 ** 31, price: 1 }] }],
          ['POST', `/v1/tables/${name}/rows/upsert`, { rows: [{ a: 'y' }], keyColumn: 'nope' }],
          ['POST', `/v1/tables/${name}/rows/upsert`, { rows: [] }],
          ['POST', `/v1/tables/${name}/rows/delete`, {}],
          ['POST', `/v1/tables/${name}/rows/delete`, { ids: 'x' }],
          ['POST', `/v1/tables/${name}/rows/delete`, { ids: [1], filter: { a: 'x' } }],
          ['POST', `/v1/tables/${name}/rows/delete`, { filter: { a: { $gte: 1 } } }],
          ['GET', `/v1/tables/${name}/row?id=abc`],
          ['GET', `/v1/tables/${name}/row`],
          ['GET', `/v1/tables/${name}/export?format=xml`],
          ['GET', `/v1/tables/${name}/export?compress=maybe`],
          ['POST', `/v1/tables/${name}/import`, {}],
          ['POST', `/v1/tables/${name}/import`, { fileId: 5 }],
          ['POST', `/v1/tables/${name}/duplicate`, { factor: 99 }],
          ['POST', '/v1/tables', { name: 'NoSchemaTable' }],
          ['POST', '/v1/tables', { name: 'NumberSchemaTable', schema: 5 }],
          ['POST', '/v1/tables', { name: 5, schema: { a: 'x' } }],
          ['POST', '/v1/tables', { name: 'EmptySchemaTable', schema: { type: 'object', properties: 'x' } }],
          ['POST', '/v1/tables', 'not json'],
          ['PUT', `/v1/tables/${name}`, { schema: 'x' }],
          ['PUT', `/v1/tables/${name}`, { frozen: 'yes' }],
          ['PUT', `/v1/tables/${name}/column`, { name: 'a' }],
          ['PUT', `/v1/tables/${name}/column`, { name: 'a', newName: '' }],
          ['POST', `/v1/tables/${name}`, {}],
        ];
        const problems: string[] = [];
        for (const [method, path, body] of cases) {
          const res = await rawRuntime(t, bot, method, path, body);
          const problem = clientErrorProblem(res);
          if (problem) {
            const shown = JSON.stringify(body)?.slice(0, 100);
            problems.push(`${method} ${path.replace(name, '{table}')} ${shown ?? ''}: ${problem}`);
          }
        }
        assert.deepEqual(problems, [], 'every malformed request is a 4xx with an error body');
        // And the table is as it was.
        assert.deepEqual(rowIds(await allRows(bot.client, name)), [1]);
      });
    });

    test('the OpenAPI document lists every Tables route', async () => {
      const doc = (await (await fetch(`${t.url}/docs/json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
      );
      for (const route of [
        'GET /v1/tables',
        'POST /v1/tables',
        'GET /v1/tables/{table}',
        'POST /v1/tables/{table}',
        'PUT /v1/tables/{table}',
        'DELETE /v1/tables/{table}',
        'PUT /v1/tables/{table}/column',
        'POST /v1/tables/{sourceTableId}/duplicate',
        'GET /v1/tables/{table}/export',
        'POST /v1/tables/{table}/import',
        'GET /v1/tables/{table}/jobs',
        'GET /v1/tables/{table}/row',
        'POST /v1/tables/{table}/rows/find',
        'POST /v1/tables/{table}/rows',
        'PUT /v1/tables/{table}/rows',
        'POST /v1/tables/{table}/rows/upsert',
        'POST /v1/tables/{table}/rows/delete',
      ]) {
        assert.ok(routes.includes(route), `${route} is in the OpenAPI document`);
      }
    });
  });
}
