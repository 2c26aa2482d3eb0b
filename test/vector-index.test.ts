import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Client } from '@botpress/client';
import { seeded } from '../src/store/seeded.ts';
import { vectorSignature } from '../src/store/vectors/signature.ts';
import { fileSettled } from './helpers/files.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { createTestBot, waitFor } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

// The vector index of each store (sqlite-vec on SQLite, the signature scan on Postgres) against the exact
// scan (PARLEY_VECTOR_INDEX=exact) on the same corpus: a few files of paragraphs of drawn words, more
// passages than the index's candidates for a search (500), so that the index has to choose them.
const API_KEY = 'sk-test-embeddings-key';
const FILES = 3;
const PARAGRAPHS = 400;
const WORDS = Array.from({ length: 600 }, (_, i) => `w${(i * 7919).toString(36)}x${i % 17}`);
const SCHEMA = {
  type: 'object',
  properties: { note: { type: 'string', 'x-zui': { searchable: true } } },
};

/** File `f` of the corpus: PARAGRAPHS paragraphs of 8 to 15 words, the same on every run. */
function corpusFile(f: number): string {
  const random = seeded(1000 + f);
  const word = () => WORDS[Math.floor(random() * WORDS.length)] as string;
  return Array.from({ length: PARAGRAPHS }, () =>
    Array.from({ length: 8 + Math.floor(random() * 8) }, word).join(' '),
  ).join('\n\n');
}

/** Queries of three drawn words. */
const QUERIES = (() => {
  const random = seeded(77);
  return Array.from({ length: 20 }, () =>
    Array.from({ length: 3 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' '),
  );
})();

/** The vectors with a signature, and the index's rows (the signature tables, on both stores), of one kind. */
async function indexCounts(
  t: TestServer,
  kind: 'passages' | 'rows',
): Promise<{ vectors: number; indexed: number }> {
  const count = async (table: string, where = sql`true`) =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(
          t.server.store.db,
        )
      ).rows[0]?.n,
    );
  return {
    vectors: await count(kind === 'passages' ? 'passage_vectors' : 'row_vectors', sql`signature is not null`),
    indexed: await count(kind === 'passages' ? 'passage_signatures' : 'row_signatures'),
  };
}

/** Uploads the corpus (each file tagged with its number) and waits until every passage has a vector. */
async function uploadCorpus(t: TestServer, client: Client): Promise<void> {
  const ids: string[] = [];
  for (let f = 0; f < FILES; f++) {
    const { file } = await client.uploadFile({
      key: `corpus-${f}.md`,
      content: corpusFile(f),
      index: true,
      tags: { part: String(f), corpus: 'yes' },
    });
    ids.push(file.id);
  }
  for (const id of ids) await fileSettled(client, id);
  await waitFor(
    'the corpus to be embedded',
    async () => {
      const [passages, vectors] = await Promise.all(
        ['file_passages', 'passage_vectors'].map(async (table) =>
          Number(
            (
              await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(
                t.server.store.db,
              )
            ).rows[0]?.n,
          ),
        ),
      );
      return passages === FILES * PARAGRAPHS && vectors === passages;
    },
    120_000,
  );
}

/** The top 10 by meaning of each query (file key and position), among the files `tags` selects. */
async function topTens(client: Client, tags: Record<string, string>): Promise<string[][]> {
  const answers: string[][] = [];
  for (const query of QUERIES) {
    const { passages } = await client.searchFiles({ query, tags, limit: 10, contextDepth: 0 });
    answers.push(passages.map((p) => `${p.file.key}:${p.meta.position ?? -1}`));
  }
  return answers;
}

/** Of each exact top 10, the share the index's top 10 holds. */
function recallAt10(indexed: string[][], exact: string[][]): number {
  let found = 0;
  let wanted = 0;
  exact.forEach((answers, i) => {
    const got = new Set(indexed[i]);
    wanted += answers.length;
    found += answers.filter((a) => got.has(a)).length;
  });
  return found / wanted;
}

for (const store of await testStores()) {
  describe(`vector index (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let indexed: TestServer;
    let exact: TestServer;
    let bot: TestBot;
    let exactBot: TestBot;

    before(async () => {
      models = await startModelServer({ apiKey: API_KEY });
      const settings = {
        ...parleySettings(models),
        llmApiKey: API_KEY,
        embeddingsModel: 'test-embeddings',
        searchRanking: 'meaning',
      };
      indexed = await startTestServer(store, settings);
      exact = await startTestServer(store, { ...settings, vectorIndex: 'exact' });
      bot = await createTestBot(indexed, 'indexed-bot');
      exactBot = await createTestBot(exact, 'exact-bot');
      await uploadCorpus(indexed, bot.client);
      await uploadCorpus(exact, exactBot.client);
    });
    after(async () => {
      await indexed?.close();
      await exact?.close();
      await models?.close();
    });

    test('each store runs its index; PARLEY_VECTOR_INDEX=exact runs none', () => {
      assert.equal(indexed.server.store.sql.vectorIndex.kind, 'signature-cache');
      assert.equal(exact.server.store.sql.vectorIndex.kind, 'exact');
    });

    test('the index finds what the exact scan finds: recall@10 at least 0.95, among every file and a few', async () => {
      const every = recallAt10(
        await topTens(bot.client, { corpus: 'yes' }),
        await topTens(exactBot.client, { corpus: 'yes' }),
      );
      assert.ok(every >= 0.95, `recall@10 of the index over every file: ${every}`);
      // One file of three: most of the bot's nearest are of other files (answered by the exact scan of it).
      const one = recallAt10(
        await topTens(bot.client, { part: '1' }),
        await topTens(exactBot.client, { part: '1' }),
      );
      assert.ok(one >= 0.95, `recall@10 of the index over one file: ${one}`);
      // Two of three: the index's candidates, those of other files left out.
      const { passages } = await bot.client.searchFiles({
        query: QUERIES[0] as string,
        tags: { part: '2' },
        limit: 10,
      });
      assert.ok(passages.length > 0 && passages.every((p) => p.file.key === 'corpus-2.md'));
    });

    test('the index is kept in the transaction of every write: a file, a knowledge base, rows and a table deleted', async () => {
      const before = await indexCounts(indexed, 'passages');
      assert.equal(before.indexed, before.vectors);
      assert.equal(before.vectors, FILES * PARAGRAPHS);
      const { files } = await bot.client.listFiles({ tags: { part: '0' } });
      const [first] = files;
      assert.ok(first);
      await bot.client.deleteFile({ id: first.id });
      assert.deepEqual(await indexCounts(indexed, 'passages'), {
        vectors: (FILES - 1) * PARAGRAPHS,
        indexed: (FILES - 1) * PARAGRAPHS,
      });

      // A knowledge base deleted takes its files, their passages and vectors, and their signatures.
      const { knowledgeBase } = await bot.client.createKnowledgeBase({ name: 'Scratch' });
      const kbFile = await bot.client.uploadFile({
        key: 'kb.md',
        content: corpusFile(7).split('\n\n').slice(0, 20).join('\n\n'),
        index: true,
        tags: { source: 'knowledge-base', kbId: knowledgeBase.id },
      });
      await fileSettled(bot.client, kbFile.file.id);
      await waitFor('the knowledge base to be embedded', async () => {
        const counts = await indexCounts(indexed, 'passages');
        return counts.indexed === (FILES - 1) * PARAGRAPHS + 20 && counts.vectors === counts.indexed;
      });
      await bot.client.deleteKnowledgeBase({ id: knowledgeBase.id });
      assert.deepEqual(await indexCounts(indexed, 'passages'), {
        vectors: (FILES - 1) * PARAGRAPHS,
        indexed: (FILES - 1) * PARAGRAPHS,
      });

      await bot.client.createTable({ name: 'NotesTable', schema: SCHEMA });
      const { rows } = await bot.client.createTableRows({
        table: 'NotesTable',
        rows: [...Array(30).keys()].map((i) => ({ note: corpusFile(9).split('\n\n')[i] })),
      });
      await waitFor('the rows to be embedded', async () => {
        const counts = await indexCounts(indexed, 'rows');
        return counts.vectors === 30 && counts.indexed === 30;
      });
      await bot.client.deleteTableRows({ table: 'NotesTable', ids: rows.slice(0, 10).map((r) => r.id) });
      assert.deepEqual(await indexCounts(indexed, 'rows'), { vectors: 20, indexed: 20 });
      const found = await bot.client.findTableRows({ table: 'NotesTable', search: QUERIES[1] });
      assert.ok(
        found.rows.length > 0 && found.rows.every((r) => !rows.slice(0, 10).some((d) => d.id === r.id)),
      );
      await bot.client.deleteTable({ table: 'NotesTable' });
      assert.deepEqual(await indexCounts(indexed, 'rows'), { vectors: 0, indexed: 0 });
    });

    test('vectors held in memory answer as the ones read from the database (PARLEY_VECTOR_CACHE_MB=0)', async () => {
      // Twice: the first search reads the files into memory, the second answers from there.
      await topTens(bot.client, { corpus: 'yes' });
      const held = await topTens(bot.client, { corpus: 'yes' });
      await indexed.restart({ vectorCacheMb: '0' });
      try {
        assert.deepEqual(await topTens(bot.client, { corpus: 'yes' }), held);
      } finally {
        await indexed.restart({});
      }
      assert.deepEqual(await topTens(bot.client, { corpus: 'yes' }), held);
    });

    test("searches at once on a server just started read each file's vectors once", async () => {
      await indexed.restart({});
      const { db, sql: dialect } = indexed.server.store;
      const files = await db.selectFrom('files').select('id').where('bot_id', '=', bot.botId).execute();
      const stored = await db
        .selectFrom('passage_vectors')
        .select(['model', 'dimension'])
        .executeTakeFirstOrThrow();
      const query = new Float32Array(stored.dimension).fill(1 / Math.sqrt(stored.dimension));
      // The statements that read signatures and vectors into the server's memory.
      let reads = 0;
      const counted = db.withPlugin({
        transformQuery: ({ node }) => {
          if (JSON.stringify(node).includes('join passage_signature_versions')) reads++;
          return node;
        },
        transformResult: ({ result }) => Promise.resolve(result),
      });
      const search = () =>
        dialect.vectorIndex.candidates(counted, {
          source: 'passages',
          botId: bot.botId,
          fileIds: files.map((f) => f.id),
          excludedTypes: [],
          model: stored.model,
          signature: vectorSignature(query),
          limit: 20,
        });
      const answers = await Promise.all([search(), search(), search(), search()]);
      assert.equal(reads, 1, 'one read of the files for four searches');
      assert.equal(answers[0]?.length, 20);
      for (const answer of answers) assert.deepEqual(answer, answers[0]);
      await search();
      assert.equal(reads, 1, 'none once they are held');
    });

    test('a file whose passages are replaced is searched by its new ones, its signatures kept in step', async () => {
      // Searched once: on Postgres the server holds the file's signatures in memory from now on.
      await topTens(bot.client, { part: '2' });
      // As many passages as before: the counts the next tests expect stay.
      const replaced = corpusFile(8).split('\n\n');
      for (const t of [indexed, exact]) {
        const client = t === indexed ? bot.client : exactBot.client;
        const { files } = await client.listFiles({ tags: { part: '2' } });
        const id = files[0]?.id;
        assert.ok(id);
        await client.setFilePassages({ id, passages: replaced.map((content) => ({ content })) });
        await fileSettled(client, id);
        await waitFor('the new passages to be embedded', async () => {
          const { rows } = await sql<{ n: number }>`select count(*) as n from passage_vectors v
            join file_passages p on p.id = v.passage_id where p.file_id = ${id}`.execute(t.server.store.db);
          return Number(rows[0]?.n) === replaced.length;
        });
      }
      const recall = recallAt10(
        await topTens(bot.client, { part: '2' }),
        await topTens(exactBot.client, { part: '2' }),
      );
      assert.ok(recall >= 0.95, `recall@10 of the index over the replaced file: ${recall}`);
      if (store.name === 'postgres') {
        // The versions the copies are checked against count every file's signatures, no more.
        const { rows } = await sql<{ file_id: string; signatures: number; stored: number }>`
          select v.file_id, v.signatures, (select count(*) from passage_signatures s
            where s.file_id = v.file_id and s.model = v.model) as stored
          from passage_signature_versions v`.execute(indexed.server.store.db);
        assert.ok(rows.length > 0);
        for (const row of rows) assert.equal(Number(row.signatures), Number(row.stored), row.file_id);
        const indexedCounts = await indexCounts(indexed, 'passages');
        assert.equal(
          rows.reduce((sum, row) => sum + Number(row.signatures), 0),
          indexedCounts.indexed,
        );
      }
    });

    test(
      'a store without sqlite-vec answers by the exact scan, says so once, and keeps its signatures for when it loads',
      { skip: store.name !== 'sqlite' && 'SQLite only' },
      async () => {
        await indexed.restart({ sqliteVecPath: '/nonexistent/vec0.so' });
        assert.equal(indexed.server.store.sql.vectorIndex.kind, 'exact');
        assert.equal(indexed.server.store.notices.length, 1);
        assert.match(indexed.server.store.notices[0] ?? '', /sqlite-vec could not load/);
        // Written while the extension is missing: a new file's vectors, and their signatures.
        const late = await bot.client.uploadFile({
          key: 'late.md',
          content: corpusFile(5),
          index: true,
          tags: { corpus: 'yes' },
        });
        await fileSettled(bot.client, late.file.id);
        await waitFor(
          'the new file to be embedded',
          async () => {
            const counts = await indexCounts(indexed, 'passages');
            return counts.vectors === FILES * PARAGRAPHS && counts.indexed === counts.vectors;
          },
          60_000,
        );
        const byExactScan = await topTens(bot.client, { corpus: 'yes' });
        assert.ok(byExactScan.some((answers) => answers.some((a) => a.startsWith('late.md:'))));

        await indexed.restart({});
        assert.equal(indexed.server.store.sql.vectorIndex.kind, 'signature-cache');
        assert.deepEqual(indexed.server.store.notices, []);
        const recall = recallAt10(await topTens(bot.client, { corpus: 'yes' }), byExactScan);
        assert.ok(recall >= 0.95, `recall@10 of the index after the extension came back: ${recall}`);
      },
    );
  });
}
