import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { FILTER_OPERATORS } from '../src/domain/tables/filter.ts';
import { createTestBot, rawRuntime } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/**
 * Generated input to the Tables find and write routes: never a 5xx, and a write changes exactly what
 * its answer reports (the rows it answers are stored; the refused ones, in `errors`, are not).
 */

const RUNS = Number(process.env.TABLES_FUZZ_RUNS ?? 60);
const COLUMNS = ['name', 'price', 'active', 'when', 'info', 'list'];
const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    active: { type: 'boolean' },
    when: { type: 'string', format: 'date-time' },
    info: { type: 'object' },
    list: { type: 'array' },
  },
};

/** Any JSON, with the texts and numbers that break stores: NUL, lone surrogates, huge and tiny numbers. */
const nasty = fc.oneof(
  fc.constantFrom('x\u0000y', '\ud800', '', '2024-02-30T00:00:00Z', '1e400', 'NaN', "'; drop table x; --"),
  fc.constantFrom(1e308, -1e308, 5e-324, 2 ** 53 + 1, -0, 2 ** 31, 0.1),
);
const anyValue = fc.oneof({ maxDepth: 3 }, fc.jsonValue({ maxDepth: 3 }), nasty);
const key = fc.oneof(fc.constantFrom(...COLUMNS, 'id', 'createdAt', 'unknown', 'info.a', '$or'), fc.string());
const row = fc.dictionary(key, anyValue, { maxKeys: 6 });
// Every operator, and one written without its `$`.
const operator = fc.constantFrom(...FILTER_OPERATORS, 'gte');
const filter = fc.letrec((tie) => ({
  filter: fc.dictionary(
    fc.oneof(fc.constantFrom(...COLUMNS, 'id', 'createdAt', 'info.a.b', '$and', '$or', '$not'), fc.string()),
    fc.oneof(
      { maxDepth: 2 },
      anyValue,
      fc.dictionary(operator, anyValue, { maxKeys: 3 }),
      fc.array(tie('filter'), { maxLength: 3 }),
    ),
    { maxKeys: 4 },
  ),
}));

for (const store of await testStores()) {
  describe(`Tables routes fuzzed (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    const table = 'FuzzTable';
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'tables-fuzz');
      await bot.client.createTable({ name: table, schema: SCHEMA, keyColumn: 'name' });
    });
    after(() => t.close());

    const count = async () => (await bot.client.getTable({ table })).rows;

    test('writes: never a 5xx, and the table changes by exactly the rows answered', async () => {
      let stored = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(row, { minLength: 1, maxLength: 8 }),
          fc.constantFrom('create', 'upsert'),
          async (rows, how) => {
            const before = await count();
            const res =
              how === 'create'
                ? await rawRuntime(t, bot, 'POST', `/v1/tables/${table}/rows`, { rows })
                : await rawRuntime(t, bot, 'POST', `/v1/tables/${table}/rows/upsert`, {
                    rows,
                    keyColumn: 'name',
                  });
            assert.ok(res.status < 500, `status ${res.status}: ${JSON.stringify(res.body)}`);
            const after = await count();
            if (res.status !== 200) {
              assert.equal(after, before, 'a refused call writes nothing');
              return;
            }
            const body = res.body as {
              rows?: unknown[];
              inserted?: unknown[];
              updated?: unknown[];
              errors?: string[];
            };
            const inserted = how === 'create' ? (body.rows?.length ?? 0) : (body.inserted?.length ?? 0);
            assert.equal(after, before + inserted, 'the rows answered as written are stored, no more');
            stored += inserted;
            const answered = inserted + (body.updated?.length ?? 0) + (body.errors?.length ?? 0);
            assert.equal(answered, rows.length, 'every row is answered: written, updated or refused');
          },
        ),
        { numRuns: RUNS, seed: 7 },
      );
      assert.ok(stored > 0, 'some generated rows were valid and stored');
    });

    test('finds: never a 5xx, and a 400 names the part of the query', async () => {
      const statuses = new Set<number>();
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            filter.filter,
            fc.constantFrom(
              {},
              { name: 'a' },
              { price: { $gt: 1 } },
              { 'info.a': 1 },
              { $or: [{ active: true }, { list: { $size: 1 } }] },
            ),
          ),
          fc.option(fc.constantFrom(...COLUMNS, 'id', 'nope', 'info.a')),
          fc.option(
            fc.dictionary(
              fc.constantFrom(...COLUMNS, 'id'),
              fc.oneof(fc.string(), fc.array(fc.string()), anyValue),
              { maxKeys: 2 },
            ),
          ),
          async (where, orderBy, group) => {
            const res = await rawRuntime(t, bot, 'POST', `/v1/tables/${table}/rows/find`, {
              filter: where,
              ...(orderBy !== null && { orderBy }),
              ...(group !== null && { group }),
            });
            assert.ok(
              res.status === 200 || res.status === 400,
              `status ${res.status}: ${JSON.stringify(res.body)}`,
            );
            statuses.add(res.status);
            if (res.status === 400) {
              const body = res.body as { type?: string; message?: string };
              assert.ok(body.type === 'InvalidQuery' || body.type === 'InvalidPayload', JSON.stringify(body));
              assert.ok((body.message ?? '').length > 0);
            }
          },
        ),
        { numRuns: RUNS * 2, seed: 11 },
      );
      assert.deepEqual([...statuses].sort(), [200, 400], 'generated queries both pass and fail');
    });

    test('deletes by filter: never a 5xx, and the count answered is the rows gone', async () => {
      await fc.assert(
        fc.asyncProperty(filter.filter, async (where) => {
          const before = await count();
          const res = await rawRuntime(t, bot, 'POST', `/v1/tables/${table}/rows/delete`, { filter: where });
          assert.ok(res.status < 500, `status ${res.status}: ${JSON.stringify(res.body)}`);
          const after = await count();
          const deleted = res.status === 200 ? (res.body as { deletedRows: number }).deletedRows : 0;
          assert.equal(after, before - deleted);
        }),
        { numRuns: RUNS, seed: 13 },
      );
    });
  });
}
