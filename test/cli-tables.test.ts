// `parley tables list|export|import` as a user runs it: the built command, against a real server.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { Client } from '@botpress/client';
import { runParley } from './helpers/process.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { allRows, isGzip, pick } from './helpers/tables.ts';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    active: { type: 'boolean' },
  },
};
const COLUMNS = ['name', 'price', 'active'];
const PRODUCTS = [
  { name: 'Apple, red', price: 1.5, active: true },
  { name: 'banana', price: 5, active: false },
];

for (const store of await testStores()) {
  describe(`parley tables list|export|import (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let tmp: string;
    let botId: string;
    let runtime: Client;
    const env = () => ({ PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_BOT_ID: botId });
    const run = async (args: string[], environment: Record<string, string> = env()) => {
      const proc = runParley(args, environment);
      const code = await proc.exited;
      return { code, output: proc.output() };
    };
    const file = (name: string) => path.join(tmp, name);

    before(async () => {
      t = await startTestServer(store);
      tmp = await mkdtemp(path.join(os.tmpdir(), 'parley-cli-tables-'));
      ({
        bot: { id: botId },
      } = await t.client().createBot({ name: 'cli-tables' }));
      runtime = t.client({ botId });
      await runtime.createTable({ name: 'Products', schema: SCHEMA });
      await runtime.createTableRows({ table: 'Products', rows: PRODUCTS });
      await runtime.createTable({ name: 'Imports', schema: SCHEMA });
      await runtime.createTableRows({ table: 'Imports', rows: [{ name: 'zed', price: 9, active: true }] });
    });
    after(async () => {
      await t.close();
      await rm(tmp, { recursive: true, force: true });
    });

    test('--help on the command and each action; usage and connection mistakes exit 1', async () => {
      for (const args of [
        ['tables', '--help'],
        ['tables', 'list', '--help'],
        ['tables', 'export', '--help'],
        ['tables', 'import', '-h'],
        ['help', 'tables'],
      ]) {
        const { code, output } = await run(args, {});
        assert.equal(code, 0, `parley ${args.join(' ')}: ${output}`);
        assert.match(output, /^usage: parley tables list \[--json\]/, `parley ${args.join(' ')}`);
        assert.match(output, /parley tables export <table> \[--format csv\|json\] \[--out FILE\] \[--gzip\]/);
        assert.match(output, /parley tables import <table> <file>/);
        assert.match(output, /Reads PARLEY_URL .*PARLEY_TOKEN and PARLEY_BOT_ID/);
      }
      const usage = await run(['tables']);
      assert.equal(usage.code, 1);
      assert.match(usage.output, /^parley: usage: parley tables list/);
      const noBot = await run(['tables', 'list'], { PARLEY_URL: t.url, PARLEY_TOKEN: t.token });
      assert.equal(noBot.code, 1);
      assert.match(noBot.output, /^parley: a bot is required: set PARLEY_BOT_ID or pass --bot-id/);
      const noToken = await run(['tables', 'list', '--bot-id', botId], { PARLEY_URL: t.url });
      assert.equal(noToken.code, 1);
      assert.match(noToken.output, /^parley: a token is required: set PARLEY_TOKEN or pass --token/);
      const badFormat = await run(['tables', 'export', 'Products', '--format', 'xml']);
      assert.equal(badFormat.code, 1);
      assert.equal(badFormat.output, 'parley: --format must be csv or json\n');
      const missing = await run(['tables', 'export', 'Nope']);
      assert.equal(missing.code, 1);
      assert.match(missing.output, /^parley: ResourceNotFound: .*Nope/);
    });

    test('list: each table with its id, rows and columns; --json; --bot-id instead of PARLEY_BOT_ID', async () => {
      const { tables } = await runtime.listTables({});
      const ids = Object.fromEntries(tables.map((table) => [table.name, table.id]));
      const listed = await run(['tables', 'list']);
      assert.equal(listed.code, 0, listed.output);
      const lines = listed.output.trimEnd().split('\n').sort();
      assert.deepEqual(
        lines,
        [
          `${ids.Imports}  Imports  1 row  name:string, price:number, active:boolean`,
          `${ids.Products}  Products  2 rows  name:string, price:number, active:boolean`,
        ].sort(),
      );
      const { PARLEY_BOT_ID, ...withoutBot } = env();
      const json = await run(['tables', 'list', '--json', '--bot-id', PARLEY_BOT_ID], withoutBot);
      assert.equal(json.code, 0, json.output);
      const columns = [
        { name: 'name', type: 'string' },
        { name: 'price', type: 'number' },
        { name: 'active', type: 'boolean' },
      ];
      assert.deepEqual(
        (JSON.parse(json.output) as { name: string }[]).sort((a, b) => a.name.localeCompare(b.name)),
        [
          { id: ids.Imports, name: 'Imports', rows: 1, columns },
          { id: ids.Products, name: 'Products', rows: 2, columns },
        ],
      );
    });

    test('export: CSV and JSON to a file, gzipped, and to stdout', async () => {
      const csv = await run(['tables', 'export', 'Products', '--out', file('products.csv')]);
      assert.equal(csv.code, 0, csv.output);
      assert.equal(csv.output, `Exported Products to ${file('products.csv')} (csv)\n`);
      const csvText = await readFile(file('products.csv'), 'utf8');
      assert.equal(csvText, '"name","price","active"\n"Apple, red",1.5,true\n"banana",5,false\n');

      const json = await run(['tables', 'export', 'Products', '--format', 'json', '--out', file('p.json')]);
      assert.equal(json.code, 0, json.output);
      const exported = JSON.parse(await readFile(file('p.json'), 'utf8')) as {
        table: { name: string };
        rows: Record<string, unknown>[];
      };
      assert.equal(exported.table.name, 'Products');
      assert.deepEqual(
        exported.rows.map((row) => pick(row, COLUMNS)),
        PRODUCTS,
      );

      const gzip = await run(['tables', 'export', 'Products', '--gzip', '--out', file('p.csv.gz')]);
      assert.equal(gzip.code, 0, gzip.output);
      assert.match(gzip.output, /\(csv, gzipped\)/);
      const bytes = await readFile(file('p.csv.gz'));
      assert.ok(isGzip(bytes));
      assert.equal(gunzipSync(bytes).toString('utf8'), csvText);

      const stdout = await run(['tables', 'export', 'Products']);
      assert.equal(stdout.code, 0, stdout.output);
      assert.equal(stdout.output, csvText, 'stdout holds the file and nothing else');
    });

    test('import: a CSV file adds its rows and prints the count; the uploaded copy is deleted', async () => {
      await writeFile(file('more.csv'), 'name,price,active\nkiwi,2.5,true\n"lime, green",0.75,false\n');
      const imported = await run(['tables', 'import', 'Imports', file('more.csv')]);
      assert.equal(imported.code, 0, imported.output);
      assert.equal(imported.output, `Imported ${file('more.csv')} into Imports: it has 3 rows\n`);
      assert.deepEqual(
        (await allRows(runtime, 'Imports')).map((row) => pick(row, COLUMNS)),
        [
          { name: 'zed', price: 9, active: true },
          { name: 'kiwi', price: 2.5, active: true },
          { name: 'lime, green', price: 0.75, active: false },
        ],
      );
      assert.deepEqual(
        (await runtime.listFiles({})).files.filter((f) => f.key.includes('/import-')),
        [],
      );
    });

    test('import: a row of the wrong type fails the import with the job’s reason, and adds no row', async () => {
      const before = (await runtime.getTable({ table: 'Imports' })).rows;
      await writeFile(file('bad.csv'), 'name,price,active\nfig,3,true\nplum,not a number,false\n');
      const failed = await run(['tables', 'import', 'Imports', file('bad.csv')]);
      assert.equal(failed.code, 1, failed.output);
      assert.match(
        failed.output,
        /^parley: importing .*bad\.csv into Imports failed: No row was imported: .*price/,
      );
      assert.equal((await runtime.getTable({ table: 'Imports' })).rows, before);
      const missing = await run(['tables', 'import', 'Imports', file('absent.csv')]);
      assert.equal(missing.code, 1);
      assert.equal(missing.output, `parley: ${file('absent.csv')} is not a file\n`);
    });
  });
}
