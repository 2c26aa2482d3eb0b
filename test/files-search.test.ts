import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError } from '@botpress/client';
import { sql } from 'kysely';
import { fileSettled, makePdf } from './helpers/files.ts';
import { createTestBot, rawRuntime, rejectsWith } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const MARKDOWN = `# Shipping handbook

## Delivery times

Parcels leave our warehouse within two working days. Express parcels arrive the next morning.

## Lost parcels

- Wait five days after the expected date
- Then contact the carrier with your tracking number

| Zone | Price |
| ---- | ----- |
| EU   | 5 EUR |

\`\`\`
track --parcel 1234
\`\`\`

> Carriers are not responsible for parcels left at the door.
`;

const HTML = `<!doctype html><html><head><title>Warranty</title><style>p { color: red }</style>
<script>var hidden = "warranty refund secret";</script></head>
<body><nav><a href="/">Home</a></nav>
<h1>Warranty policy</h1>
<p>Every appliance carries a <b>three year</b> warranty covering manufacturing defects.</p>
<h2>Claims</h2>
<p>To claim the warranty, bring the appliance and its receipt to any service centre.</p>
<ul><li>Kettles</li><li>Toasters<ul><li>Two-slot</li></ul></li></ul>
<table><tr><th>Item</th><th>Years</th></tr><tr><td>Oven</td><td>5</td></tr></table>
</body></html>`;

const PDF = makePdf([
  [
    { text: 'Employee Handbook', size: 24 },
    { text: 'Welcome to the company. This handbook explains our rules.' },
  ],
  [
    { text: 'Holidays', size: 16 },
    { text: 'Every employee receives twenty-eight paid vacation days per year.' },
    { text: 'Unused vacation days expire at the end of March.' },
  ],
]);

const DISTRACTORS = [
  'Our cafeteria serves lunch between noon and two. Vegetarian dishes are available every day.',
  'The parking garage opens at seven. Badges are required for entry to the garage.',
  'Printers are on every floor. Report paper jams to the facilities team.',
];

for (const store of await testStores()) {
  describe(`Files API: indexing and search (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let kbId: string;
    const ids: Record<string, string> = {};
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'search-bot');
      ({
        knowledgeBase: { id: kbId },
      } = await bot.client.createKnowledgeBase({ name: 'Company' }));
      const kbTags = { source: 'knowledge-base', kbId };
      const uploads: [string, string | Buffer, string | undefined][] = [
        ['handbook/shipping.md', MARKDOWN, undefined],
        ['web/warranty.html', HTML, 'text/html; charset=utf-8'],
        ['handbook/employees.pdf', PDF, undefined],
        ...DISTRACTORS.map((text, i): [string, string, undefined] => [`misc/note-${i}.txt`, text, undefined]),
      ];
      for (const [key, content, contentType] of uploads) {
        const { file } = await bot.client.uploadFile({
          key,
          content,
          index: true,
          tags: kbTags,
          ...(contentType && { contentType }),
        });
        ids[key] = file.id;
      }
      for (const id of Object.values(ids)) await fileSettled(bot.client, id);
    });
    after(() => t.close());

    const search = (query: string, extra: Record<string, unknown> = {}) =>
      bot.client.searchFiles({ query, tags: { kbId }, ...extra });

    test('a Markdown file is parsed into typed passages and found by a question about it, ranked first', async () => {
      const passages = await bot.client.list
        .filePassages({ id: ids['handbook/shipping.md'] as string })
        .collect();
      assert.deepEqual(
        passages.map((p) => p.meta.subtype),
        ['title', 'subtitle', 'paragraph', 'subtitle', 'list', 'table', 'code', 'blockquote'],
      );
      assert.deepEqual(
        passages.map((p) => p.meta.position),
        [0, 1, 2, 3, 4, 5, 6, 7],
      );
      assert.equal(
        passages[4]?.content,
        '- Wait five days after the expected date\n- Then contact the carrier with your tracking number',
      );
      const { passages: hits } = await search('How long before parcels leave the warehouse?', {
        contextDepth: 0,
      });
      assert.equal(hits[0]?.file.key, 'handbook/shipping.md');
      assert.match(hits[0]?.content ?? '', /within two working days/);
    });

    test('an HTML page: scripts, styles and navigation left out, structure kept, found first', async () => {
      const passages = (
        await bot.client.listFilePassages({ id: ids['web/warranty.html'] as string, limit: 50 })
      ).passages;
      assert.deepEqual(
        passages.map((p) => [p.meta.subtype, p.content]),
        [
          ['title', '# Warranty policy'],
          ['paragraph', 'Every appliance carries a three year warranty covering manufacturing defects.'],
          ['subtitle', '## Claims'],
          ['paragraph', 'To claim the warranty, bring the appliance and its receipt to any service centre.'],
          ['list', '- Kettles\n- Toasters\n  - Two-slot'],
          ['table', '| Item | Years |\n| --- | --- |\n| Oven | 5 |'],
        ],
      );
      const { passages: hits } = await search('how do I claim my warranty with a receipt', {
        contextDepth: 0,
      });
      assert.equal(hits[0]?.file.key, 'web/warranty.html');
      assert.match(hits[0]?.content ?? '', /service centre/);
    });

    test('a PDF: text by page, headings by size, found first with its page number', async () => {
      const passages = (await bot.client.listFilePassages({ id: ids['handbook/employees.pdf'] as string }))
        .passages;
      assert.deepEqual(
        passages.map((p) => [p.meta.subtype, p.meta.pageNumber]),
        [
          ['title', 1],
          ['paragraph', 1],
          ['subtitle', 2],
          ['paragraph', 2],
        ],
      );
      const { passages: hits } = await search('how many vacation days do employees get', { contextDepth: 0 });
      assert.equal(hits[0]?.file.key, 'handbook/employees.pdf');
      assert.equal(hits[0]?.meta.pageNumber, 2);
      assert.match(hits[0]?.content ?? '', /twenty-eight paid vacation days/);
    });

    test('English stemming: other forms of a word match, and scores fall from the first hit down', async () => {
      const { passages } = await search('warranties claimed', { contextDepth: 0 });
      assert.equal(passages[0]?.file.key, 'web/warranty.html');
      const scores = passages.map((p) => p.score);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
      );
      assert.ok(scores.every((s) => Number.isFinite(s)));
      assert.deepEqual((await search('zyzzyva quux')).passages, [], 'no match, no passage');
      assert.deepEqual((await search('')).passages, []);
    });

    test('limit, contextDepth, withContext, includeBreadcrumb and consolidate', async () => {
      assert.equal((await search('parcels garage lunch warranty', { limit: 2 })).passages.length, 2);
      const [plain] = (await search('tracking number carrier', { contextDepth: 0 })).passages;
      assert.equal(plain?.meta.subtype, 'list');
      const [wide] = (await search('tracking number carrier', { contextDepth: 1 })).passages;
      assert.equal(
        wide?.content,
        ['## Lost parcels', plain?.content, '| Zone | Price |\n| ---- | ----- |\n| EU   | 5 EUR |'].join(
          '\n\n',
        ),
      );
      const [contextual] = (
        await search('tracking number carrier', {
          contextDepth: 2,
          withContext: true,
          includeBreadcrumb: true,
        })
      ).passages;
      assert.deepEqual(
        contextual?.context?.map((c) => [c.type, c.offset]),
        [
          ['breadcrumb', undefined],
          ['breadcrumb', undefined],
          ['preceding', -2],
          ['preceding', -1],
          ['current', 0],
          ['subsequent', 1],
          ['subsequent', 2],
        ],
      );
      assert.ok(contextual?.content.startsWith('Shipping handbook > Lost parcels\n\n'));
      const consolidated = (await search('parcels carrier warehouse', { consolidate: true })).passages;
      assert.equal(consolidated[0]?.meta.type, 'consolidated');
      assert.equal(
        new Set(consolidated.map((p) => p.file.id)).size,
        consolidated.length,
        'one passage per file',
      );
      assert.ok(consolidated[0]?.content.startsWith('# Shipping handbook'));
      assert.equal(consolidated[0]?.context, undefined);
    });

    test('searches see only indexed files of the tag filter, and the files the caller sees', async () => {
      await bot.client.uploadFile({
        key: 'unindexed.txt',
        content: 'warehouse warehouse warehouse',
        tags: { kbId },
      });
      const other = await bot.client.uploadFile({
        key: 'other-kb.txt',
        content: 'warehouse warehouse warehouse',
        index: true,
        tags: { kbId: 'another' },
      });
      await fileSettled(bot.client, other.file.id);
      const inKb = (await search('warehouse')).passages.map((p) => p.file.key);
      assert.ok(!inKb.includes('unindexed.txt') && !inKb.includes('other-kb.txt'));
      const everywhere = (await bot.client.searchFiles({ query: 'warehouse' })).passages.map(
        (p) => p.file.key,
      );
      assert.ok(everywhere.includes('other-kb.txt'));
      const stranger = await createTestBot(t, 'stranger');
      assert.deepEqual((await stranger.client.searchFiles({ query: 'warehouse' })).passages, []);
      await bot.client.deleteFile({ id: other.file.id });
      const after = (await bot.client.searchFiles({ query: 'warehouse' })).passages.map((p) => p.file.key);
      assert.ok(!after.includes('other-kb.txt'), 'a deleted file is no longer found');
    });

    test('setFilePassages replaces a file’s passages with the caller’s own, searchable once stored', async () => {
      const { file } = await bot.client.uploadFile({
        key: 'custom.txt',
        content: 'original text about kettles',
        index: true,
      });
      await fileSettled(bot.client, file.id);
      await bot.client.setFilePassages({
        id: 'custom.txt',
        passages: [
          { content: '# Custom', type: 'title' },
          { content: 'Submarines dive deeper than whales.', pageNumber: 3 },
        ],
      });
      const settled = await fileSettled(bot.client, file.id);
      assert.equal(settled.status, 'indexing_completed');
      const passages = (await bot.client.listFilePassages({ id: file.id })).passages;
      assert.deepEqual(
        passages.map((p) => [p.content, p.meta.subtype, p.meta.pageNumber]),
        [
          ['# Custom', 'title', undefined],
          ['Submarines dive deeper than whales.', 'paragraph', 3],
        ],
      );
      const { passages: hits } = await bot.client.searchFiles({ query: 'submarine' });
      assert.equal(hits[0]?.file.key, 'custom.txt');
      assert.deepEqual(
        (await bot.client.searchFiles({ query: 'kettles original' })).passages.filter(
          (p) => p.file.key === 'custom.txt',
        ),
        [],
      );
      await rejectsWith(
        bot.client.setFilePassages({ id: file.id, passages: [{ content: '' }] }),
        InvalidPayloadError,
      );
    });

    test('a corrupt PDF and an unindexable type end indexing_failed with a reason; the server goes on', async () => {
      const corrupt = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(5000)]);
      const { file } = await bot.client.uploadFile({ key: 'broken.pdf', content: corrupt, index: true });
      const failed = await fileSettled(bot.client, file.id, ['indexing_failed']);
      assert.match(failed.failedStatusReason ?? '', /PDF/);
      const { file: image } = await bot.client.uploadFile({
        key: 'photo.png',
        content: randomBytes(100),
        index: true,
      });
      const refused = await fileSettled(bot.client, image.id, ['indexing_failed']);
      assert.match(refused.failedStatusReason ?? '', /image\/png/);
      const { passages } = await search('vacation days', { contextDepth: 0 });
      assert.equal(passages[0]?.file.key, 'handbook/employees.pdf');
    });

    test('bad search parameters answer 400', async () => {
      await rejectsWith(bot.client.searchFiles({ query: 'x'.repeat(1025) }), InvalidPayloadError);
      await rejectsWith(bot.client.searchFiles({ query: 'x', limit: 51 }), InvalidPayloadError);
      await rejectsWith(bot.client.searchFiles({ query: 'x', contextDepth: 11 }), InvalidPayloadError);
      await rejectsWith(
        bot.client.searchFiles({ query: 'x', tags: { kbId: { near: 1 } } }),
        InvalidPayloadError,
      );
      const missing = await rawRuntime(t, bot, 'GET', '/v1/files/search');
      assert.equal(missing.status, 400);
    });

    test('fuzz: no query or filter makes search answer a 5xx', async () => {
      const pieces = [
        '"',
        '*',
        'NEAR(',
        'AND',
        'OR',
        'NOT',
        ':',
        '-',
        '^',
        '(',
        ')',
        '{',
        '}',
        '\\',
        "'",
        '&',
        '|',
        '!',
        ';',
        '%',
        'é',
        '漢字',
        '\u0000',
        'parcels',
        ' ',
      ];
      for (let i = 0; i < 150; i++) {
        const query = Array.from(
          { length: 1 + (i % 9) },
          () => pieces[Math.floor(Math.random() * pieces.length)],
        ).join(i % 2 ? ' ' : '');
        const params = new URLSearchParams({ query });
        if (i % 3 === 0) params.set(`tags.${randomBytes(2).toString('hex')}`, query);
        if (i % 5 === 0) params.set('tags', query);
        if (i % 7 === 0) params.set('contextDepth', query);
        const res = await rawRuntime(t, bot, 'GET', `/v1/files/search?${params.toString()}`);
        assert.ok(res.status < 500, `${query} answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
    });

    test('a store of a release before search scopes: its entries are given theirs, and searches find what they found', async () => {
      await bot.client.createTable({
        name: 'ParcelNotes',
        schema: { type: 'object', properties: { note: { type: 'string', 'x-zui': { searchable: true } } } },
      });
      await bot.client.createTableRows({
        table: 'ParcelNotes',
        rows: [{ note: 'Express parcels leave at noon' }, { note: 'The canteen opens at eight' }],
      });
      const answers = async () => ({
        files: (await search('express parcels warehouse', { limit: 20 })).passages.map((p) => [
          p.file.key,
          p.content,
        ]),
        rows: (await bot.client.findTableRows({ table: 'ParcelNotes', search: 'parcels' })).rows.map((r) =>
          String(r.note),
        ),
      });
      const before = await answers();
      assert.ok(before.files.length > 1 && before.rows.length === 1, JSON.stringify(before));

      const { db } = t.server.store;
      await sql`alter table search_entries drop column scope`.execute(db);
      // An entry whose passage is gone (a store's bookkeeping gone wrong): it goes.
      if (store.name === 'postgres') {
        await sql`insert into search_entries (id, document)
          values ('psg_orphan', to_tsvector('english', 'express parcels'))`.execute(db);
      } else {
        await sql`insert into search_entries (id) values ('psg_orphan')`.execute(db);
        await sql`insert into search_fts (rowid, text)
          select rowid, 'express parcels' from search_entries where id = 'psg_orphan'`.execute(db);
      }
      // (A later migration goes too: SQLite's versions of the signatures, 0042.)
      if (store.name === 'sqlite') {
        await sql`drop trigger passage_signature_added`.execute(db);
        await sql`drop trigger passage_signature_removed`.execute(db);
        await sql`drop table passage_signature_versions`.execute(db);
      }
      await sql`delete from kysely_migration where name >= '0041'`.execute(db);
      await t.restart();

      assert.deepEqual(await answers(), before);
      const { rows } = await sql<{ id: string; scope: string; file_id: string | null }>`
        select e.id, e.scope, p.file_id from search_entries e left join file_passages p on p.id = e.id`.execute(
        t.server.store.db,
      );
      assert.ok(!rows.some((r) => r.id === 'psg_orphan'), 'the orphan entry is gone');
      assert.ok(rows.some((r) => r.id.startsWith('tr:')) && rows.some((r) => r.file_id !== null));
      for (const row of rows) {
        const scope = row.id.startsWith('tr:') ? row.id.split(':')[1] : row.file_id;
        assert.equal(row.scope, scope, row.id);
      }
    });
  });
}
