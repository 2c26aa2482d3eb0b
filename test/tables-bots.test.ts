// Bots and the Tables API: tables declared by a bot package (tables/<name>.json), created and migrated
// by `parley deploy`; the table cards of workflows; the order-status example, talked to through the
// Chat API. On SQLite and Postgres.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadPackage, PackageError } from '../src/package/load.ts';
import { chatServer, deployWithCli, turnOutcome } from './helpers/chat-bots.ts';
import type { ChatSession } from './helpers/chat-bots.ts';
import { json, writePackage } from './helpers/deployed-bots.ts';
import { runParley } from './helpers/process.ts';
import { testStores } from './helpers/stores.ts';
import { columnsOf } from './helpers/tables.ts';
import { DEFAULT_FALLBACK_TEXT } from '../src/domain/chat/fallback-message.ts';

const EXAMPLE = 'examples/order-status-bot';

/** A package whose tables and table cards have every kind of problem `parley validate` reports. */
const badTables = {
  'bot.json': json({ formatVersion: 1, name: 'bad-tables' }),
  'tables/orders.json': json({
    name: 'OrdersTable',
    keyColumn: 'items',
    schema: {
      type: 'object',
      properties: {
        orderId: { type: 'string' },
        customer: { type: 'object' },
        items: { type: 'array' },
      },
    },
  }),
  'tables/bad-types.json': json({
    schema: {
      type: 'object',
      properties: { when: { type: 'datetime' }, id: { type: 'string' }, ok: { type: 'string' } },
    },
    keyColumn: 'missing',
  }),
  'tables/zcopy.json': json({ name: 'OrdersTable', schema: { a: 1 } }),
  'tables/settings.json': json({ name: 'Settings Table', schema: { a: 1 }, factor: 99, frozen: true }),
  'tables/wide.json': json({
    schema: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`c${i}`, i])),
  }),
  'tables/notes.txt': 'not a table',
  'workflows/main.json': json({
    nodes: [
      {
        id: 'start',
        type: 'start',
        cards: [
          {
            type: 'tableFind',
            table: 'orders',
            filter: { nope: 1, $or: [{ 'customer.name': 'x' }, { ghost: 2 }], orderId: { $ne: '1' } },
            orderBy: 'rank',
            onNotFound: 'nowhere',
          },
          { type: 'tableInsert', table: 'OrdersTable', row: { orderId: '1', colour: 'red' } },
          { type: 'tableUpsert', table: 'orders', row: { id: 1, orderId: '2' }, keyColumn: 'sku' },
          { type: 'tableUpdate', table: 'MadeThroughTheApi', rowId: 3, values: { anything: 1 } },
          { type: 'tableDelete', table: 'orders' },
          { type: 'tableUpdate', table: 'orders', rowId: 0, values: {} },
        ],
      },
    ],
  }),
};

test('parley validate: a table file’s name, schema, key column and settings, and the columns table cards name', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-bad-tables-'));
  try {
    await writePackage(dir, badTables);
    const error = await loadPackage(dir).then(
      () => assert.fail('the package loaded'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof PackageError);
    const cards = (...rest: (string | number)[]) => `/nodes/0/cards/${rest.join('/')}`;
    const noColumn = (name: string) => `no column "${name}" in table OrdersTable (tables/orders.json)`;
    assert.deepEqual(
      error.problems.map((p) => [p.file, p.field, p.message]),
      [
        [
          'tables/bad-types.json',
          '',
          '"bad-types" is not a valid table name (letters, digits and _, starting with a letter or _, at most 50): give the table a "name"',
        ],
        [
          'tables/bad-types.json',
          '/schema/properties/when',
          'Column type "datetime" is not one of string, number, boolean, object, array',
        ],
        [
          'tables/bad-types.json',
          '/schema/properties/id',
          '"id" is a system field of every row: choose another column name',
        ],
        ['tables/bad-types.json', '/keyColumn', '"missing" is not a column of the table'],
        ['tables/notes.txt', '', 'unexpected here: tables/ holds <name>.json files'],
        [
          'tables/orders.json',
          '/keyColumn',
          '"items" is an array column: a key column is a string, number, boolean or date column',
        ],
        [
          'tables/settings.json',
          '/name',
          'must match ^[A-Za-z_][A-Za-z0-9_]{0,49}$ (Letters, digits and _, starting with a letter or _, e.g. OrdersTable; default: the file’s name)',
        ],
        ['tables/settings.json', '/factor', 'must be <= 30'],
        [
          'tables/settings.json',
          '/frozen',
          'unknown property (allowed: $schema, name, schema, keyColumn, tags, factor)',
        ],
        ['tables/wide.json', '/schema', 'A table has at most 20 columns; this schema has 21'],
        ['tables/zcopy.json', '/name', 'tables/orders.json declares table OrdersTable too'],
        ['workflows/main.json', cards(0, 'filter', 'nope'), noColumn('nope')],
        ['workflows/main.json', cards(0, 'filter', '$or', 1, 'ghost'), noColumn('ghost')],
        ['workflows/main.json', cards(0, 'orderBy'), noColumn('rank')],
        ['workflows/main.json', cards(0, 'onNotFound'), 'no node "nowhere" in workflow main'],
        ['workflows/main.json', cards(1, 'row', 'colour'), noColumn('colour')],
        ['workflows/main.json', cards(2, 'keyColumn'), noColumn('sku')],
        ['workflows/main.json', cards(4, 'filter'), 'is required'],
        ['workflows/main.json', cards(5, 'rowId'), 'must be >= 1'],
      ],
    );
    const validate = runParley(['validate', dir]);
    assert.equal(await validate.exited, 1);
    assert.match(validate.output(), /has \d+ problems:/);
    assert.match(
      validate.output(),
      /tables\/bad-types\.json:\d+:\d+ \/keyColumn: "missing" is not a column of the table/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

for (const store of await testStores()) {
  describe(`bot packages with tables, and the table cards (${store.name})`, { skip: store.skip }, () => {
    const suite = chatServer(store, 'parley-tables-bots-');
    const { target, talk } = suite;
    /** Says `text` and answers the bot's one reply. */
    async function ask(chat: ChatSession, text: string): Promise<string> {
      await chat.say(text);
      return (await chat.nextTexts(1))[0] ?? '';
    }

    test('the order-status example: deploy creates OrdersTable, the seed imports, and the bot answers from it', async () => {
      const deployed = await deployWithCli(target(), EXAMPLE);
      assert.match(deployed.output, /^Table OrdersTable: created with 5 columns$/m);
      const client = suite.t.client({ botId: deployed.botId });
      const { table } = await client.getTable({ table: 'OrdersTable' });
      assert.equal(table.keyColumn, 'orderId');
      assert.deepEqual(
        Object.fromEntries(Object.entries(columnsOf(table)).map(([name, c]) => [name, c.format ?? c.type])),
        {
          orderId: 'string',
          customer: 'string',
          status: 'string',
          statusChangedAt: 'date-time',
          total: 'number',
        },
      );

      // The README's seed, with the README's command; then one more order through the official client.
      const imported = runParley(['tables', 'import', 'OrdersTable', `${EXAMPLE}/seed/orders.csv`], {
        PARLEY_URL: suite.t.url,
        PARLEY_TOKEN: suite.t.token,
        PARLEY_BOT_ID: deployed.botId,
      });
      assert.equal(await imported.exited, 0, imported.output());
      const again = runParley(['tables', 'import', 'OrdersTable', `${EXAMPLE}/seed/orders.csv`], {
        PARLEY_URL: suite.t.url,
        PARLEY_TOKEN: suite.t.token,
        PARLEY_BOT_ID: deployed.botId,
      });
      assert.equal(await again.exited, 1, 'the seed imports once: orderId is unique');
      assert.match(again.output(), /No row was imported: Row 0: key column "orderId" already has this value/);
      const created = await client.createTableRows({
        table: 'OrdersTable',
        rows: [
          {
            orderId: '2042',
            customer: 'Katherine Johnson',
            status: 'cancelled',
            statusChangedAt: '2025-06-01T08:00:00Z',
            total: 7,
          },
        ],
      });
      assert.deepEqual(created.errors ?? [], []);

      const chat = await talk(deployed.webhookUrl);
      assert.match(await ask(chat, 'hi'), /What is your order number\?/);
      assert.equal(await ask(chat, '1001'), 'Order 1001 (Ada Lovelace) is shipped since 2025-05-12.');
      // A message that is an order number is looked up at once.
      assert.equal(await ask(chat, '#2042'), 'Order 2042 (Katherine Johnson) is cancelled since 2025-06-01.');
      assert.equal(
        await ask(chat, '9999'),
        'There is no order with the number 9999. Please check it and send it again.',
      );
      assert.match(await ask(chat, 'where is my parcel?'), /What is your order number\?/);
      assert.match(await ask(chat, 'soon please'), /An order number is 3 to 10 digits/);
      assert.equal(await ask(chat, '1003'), 'Order 1003 (Grace Hopper) is delivered since 2025-05-09.');
    });

    test('every table card: insert, find, update, upsert, delete, with templates; a refused call fails the turn', async () => {
      const deployed = await deployWithCli(target(), 'test/fixtures/table-cards');
      assert.match(deployed.output, /^Table TicketsTable: created with 4 columns$/m);
      const client = suite.t.client({ botId: deployed.botId });
      const chat = await talk(deployed.webhookUrl);

      assert.equal(await ask(chat, 'add T-1 Printer jams'), 'added #1 T-1: Printer jams');
      assert.equal(await ask(chat, 'add T-2 Screen flickers'), 'added #2 T-2: Screen flickers');
      assert.equal(await ask(chat, 'find T-1'), 'T-1 p1 open: Printer jams');
      assert.equal(await ask(chat, 'find T-9'), 'no ticket T-9');
      // The upsert card finds rows by the package table's keyColumn (code): T-2 is updated, T-3 inserted.
      assert.equal(await ask(chat, 'bump T-2 5'), 'upserted #2 T-2 p5');
      assert.equal(await ask(chat, 'bump T-3 3'), 'upserted #3 T-3 p3');
      assert.equal(await ask(chat, 'close T-1'), 'closed #1: open=false');
      assert.equal(await ask(chat, 'top'), 'top: T-2:5 T-3:3');
      assert.equal(await ask(chat, 'purge'), 'deleted 1');
      const { rows } = await client.findTableRows({ table: 'TicketsTable', orderBy: 'id' });
      assert.deepEqual(
        rows.map((r): unknown[] => [r.code, r.title ?? null, r.priority, r.open]),
        [
          ['T-2', 'Screen flickers', 5, true],
          ['T-3', null, 3, true],
        ],
      );

      // A filter the API refuses, and a row it refuses, fail the turn the way other cards' failures do.
      const bad = await chat.say('bad');
      const failed = await turnOutcome(client, bad);
      assert.equal(failed.status, 'failed');
      assert.match(
        failed.failureReason ?? '',
        /^The tableFind card on table TicketsTable failed: InvalidQuery: .*gte/,
      );
      // The visitor reads the bot's fallback message, never the error.
      assert.deepEqual(await chat.nextTexts(1), [DEFAULT_FALLBACK_TEXT]);
      const badRow = await chat.say('bad-row');
      const refused = await turnOutcome(client, badRow);
      assert.equal(refused.status, 'failed');
      assert.match(
        refused.failureReason ?? '',
        /^The tableInsert card on table TicketsTable failed: .*priority/,
      );
      assert.deepEqual(await chat.nextTexts(1), [DEFAULT_FALLBACK_TEXT]);
      assert.equal((await client.findTableRows({ table: 'TicketsTable' })).rows.length, 2);
      // The conversation goes on after a failed turn.
      assert.equal(await ask(chat, 'find T-3'), 'T-3 p3 open: ');
    });

    test('parley deploy migrates a table: adds columns, and removes or retypes one only with --allow-destructive', async () => {
      const dir = path.join(suite.tmp, 'order-status-bot');
      await cp(EXAMPLE, dir, { recursive: true });
      const deployed = await deployWithCli(target(), dir);
      const client = suite.t.client({ botId: deployed.botId });
      await client.createTableRows({
        table: 'OrdersTable',
        rows: [
          {
            orderId: '1',
            customer: 'A',
            status: 'shipped',
            statusChangedAt: '2025-01-01T00:00:00Z',
            total: 3,
          },
          {
            orderId: '2',
            customer: 'B',
            status: 'processing',
            statusChangedAt: '2025-01-02T00:00:00Z',
            total: 4,
          },
        ],
      });
      const again = ['--bot-id', deployed.botId];
      assert.match((await deployWithCli(target(), dir, again)).output, /^Table OrdersTable: unchanged$/m);

      const file = path.join(dir, 'tables', 'orders.json');
      const definition = JSON.parse(await readFile(file, 'utf8')) as {
        schema: { properties: Record<string, unknown> };
        tags?: Record<string, string>;
      };
      // A new column, a column of the same type described anew, a tag: nothing is deleted.
      definition.schema.properties.carrier = { type: 'string' };
      definition.schema.properties.status = { type: 'string', description: 'Where the order stands' };
      definition.tags = { team: 'support' };
      await writeFile(file, json(definition));
      assert.match(
        (await deployWithCli(target(), dir, again)).output,
        /^Table OrdersTable: added carrier; updated status; tags team=support$/m,
      );
      const status = await client.getTable({ table: 'OrdersTable' });
      assert.deepEqual(columnsOf(status.table).carrier, { type: 'string', index: 5 });
      assert.equal(status.table.schema.properties.status?.description, 'Where the order stands');
      assert.deepEqual(status.table.tags, { team: 'support' });
      assert.equal(status.rows, 2);
      assert.deepEqual(
        (await client.findTableRows({ table: 'OrdersTable', orderBy: 'orderId' })).rows.map(
          (r): unknown => r.status,
        ),
        ['shipped', 'processing'],
      );
      assert.match((await deployWithCli(target(), dir, again)).output, /^Table OrdersTable: unchanged$/m);

      // customer goes, total becomes text: both delete values.
      delete definition.schema.properties.customer;
      definition.schema.properties.total = { type: 'string' };
      await writeFile(file, json(definition));
      const refused = runParley(['deploy', dir, ...again], {
        PARLEY_URL: suite.t.url,
        PARLEY_TOKEN: suite.t.token,
        PARLEY_WORKSPACE_ID: suite.t.workspaceId,
      });
      assert.equal(await refused.exited, 1, refused.output());
      assert.match(
        refused.output(),
        /^parley: table OrdersTable: the package removes column customer and changes the type of column total \(number → string\): their values would be deleted$/m,
      );
      assert.match(refused.output(), /nothing was deployed: deploy again with --allow-destructive/);
      let { table } = await client.getTable({ table: 'OrdersTable' });
      assert.ok('customer' in columnsOf(table), 'the refused migration changed nothing');
      assert.equal(columnsOf(table).total?.type, 'number');

      const applied = await deployWithCli(target(), dir, [...again, '--allow-destructive']);
      assert.match(
        applied.output,
        /^Table OrdersTable: removed customer; emptied total \(number → string\)$/m,
      );
      table = (await client.getTable({ table: 'OrdersTable' })).table;
      assert.equal('customer' in columnsOf(table), false);
      assert.equal(columnsOf(table).total?.type, 'string');
      const { rows } = await client.findTableRows({ table: 'OrdersTable', orderBy: 'orderId' });
      assert.deepEqual(
        rows.map((r): unknown[] => [r.orderId, r.status, r.total ?? null, r.customer]),
        [
          ['1', 'shipped', null, undefined],
          ['2', 'processing', null, undefined],
        ],
      );
    });
  });
}
