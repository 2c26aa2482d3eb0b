import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@botpress/client';
import { buildConfig, ConfigError } from '../src/config.ts';
import { MEANING_WEIGHT, RANKED_BY_WORDS_ALONE } from '../src/domain/embeddings/ranking.ts';
import { fileSettled } from './helpers/files.ts';
import { isRecord } from './helpers/model-request.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer, ReceivedRequest } from './helpers/model-server.ts';
import { createTestBot, waitFor } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

// The test embedder (helpers/model-embeddings.ts) gives `car` and `vehicles` one meaning: the question
// below shares no word with the passage that answers it, so only a search by meaning finds it.
const QUESTION = 'Can I bring my car?';
const VISITORS = `# Visitors

## Parking

Vehicles may be left in the north lot, free of charge, during opening hours.

## Garden

Dogs on a leash are welcome in the garden.
`;
const API_KEY = 'sk-test-embeddings-key';
const NOTES = [
  'The cafeteria serves lunch between noon and two. Vegetarian dishes are available every day.',
  'Printers are on every floor. Report paper jams to the facilities team.',
];

/** The texts of one request to `POST /embeddings` (none for another request). */
function inputsOf(request: ReceivedRequest): string[] {
  if (request.path !== '/v1/embeddings' || !isRecord(request.body)) return [];
  const { input } = request.body;
  return Array.isArray(input) ? input.map(String) : [String(input)];
}

/** The texts sent to `POST /embeddings` by the requests from `from` on. */
function embedded(models: ModelServer, from = 0): string[] {
  return models.requests.slice(from).flatMap(inputsOf);
}

/** How many vectors the store holds for a file's passages. */
async function vectorsOf(t: TestServer, fileId: string): Promise<number> {
  const rows = await t.server.store.db
    .selectFrom('passage_vectors')
    .select('passage_id')
    .where('file_id', '=', fileId)
    .execute();
  return rows.length;
}

/** Waits until every passage of a file has a vector. */
async function embeddedFile(t: TestServer, client: Client, fileId: string): Promise<void> {
  await fileSettled(client, fileId);
  const passages = await client.list.filePassages({ id: fileId }).collect();
  await waitFor(`the passages of ${fileId} to be embedded`, async () => {
    return (await vectorsOf(t, fileId)) === passages.length;
  });
}

test('PARLEY_EMBEDDINGS_MODEL names a model of the server provider, and needs one', () => {
  const provider = { llmBaseUrl: 'http://127.0.0.1:9/v1', llmBestModel: 'best' };
  const modelOf = (embeddingsModel: string) =>
    buildConfig({ ...provider, embeddingsModel }).llm.provider?.embeddingsModel;
  assert.equal(modelOf('default:text-embedding-3-small'), 'text-embedding-3-small');
  assert.equal(modelOf('nomic-embed-text:latest'), 'nomic-embed-text:latest');
  assert.equal(buildConfig(provider).llm.provider?.embeddingsModel, undefined);
  assert.throws(() => buildConfig({ embeddingsModel: 'text-embedding-3-small' }), ConfigError);
  assert.throws(() => buildConfig({ ...provider, embeddingsModel: 'default:' }), ConfigError);
});

test('PARLEY_SEARCH_RANKING is hybrid unless it says words or meaning', () => {
  assert.equal(buildConfig({}).searchRanking, 'hybrid');
  assert.equal(buildConfig({ searchRanking: 'meaning' }).searchRanking, 'meaning');
  assert.throws(() => buildConfig({ searchRanking: 'vectors' }), /PARLEY_SEARCH_RANKING must be one of/);
});

for (const store of await testStores()) {
  describe(`semantic search: embeddings and hybrid ranking (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let semantic: TestServer;
    let plain: TestServer;
    let bot: TestBot;
    let plainBot: TestBot;
    let kbId: string;
    const ids: Record<string, string> = {};

    const upload = async (b: TestBot, key: string, content: string, tags: Record<string, string> = {}) => {
      const { file } = await b.client.uploadFile({ key, content, index: true, tags });
      return file.id;
    };

    before(async () => {
      models = await startModelServer({ apiKey: API_KEY });
      const settings = { ...parleySettings(models), llmApiKey: API_KEY };
      semantic = await startTestServer(store, { ...settings, embeddingsModel: 'test-embeddings' });
      plain = await startTestServer(store, settings);
      bot = await createTestBot(semantic, 'semantic-bot');
      plainBot = await createTestBot(plain, 'plain-bot');
      ({
        knowledgeBase: { id: kbId },
      } = await bot.client.createKnowledgeBase({ name: 'Visitors' }));
      const kbTags = { source: 'knowledge-base', kbId };
      for (const b of [bot, plainBot]) {
        ids[`${b.botId}:visitors`] = await upload(b, 'visitors.md', VISITORS, kbTags);
        for (const [i, note] of NOTES.entries())
          ids[`${b.botId}:note-${i}`] = await upload(b, `note-${i}.txt`, note, kbTags);
      }
      for (const [key, id] of Object.entries(ids)) {
        if (key.startsWith(bot.botId)) await embeddedFile(semantic, bot.client, id);
        else await fileSettled(plainBot.client, id);
      }
    });
    after(async () => {
      await semantic?.close();
      await plain?.close();
      await models?.close();
    });

    test('a question that shares no word with its answer is found only by meaning', async () => {
      const { passages } = await bot.client.searchFiles({ query: QUESTION, tags: { kbId }, contextDepth: 0 });
      assert.match(passages[0]?.content ?? '', /^Vehicles may be left in the north lot/);
      assert.equal(passages[0]?.file.key, 'visitors.md');
      const scores = passages.map((p) => p.score);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
        'higher scores first',
      );

      const words = await plainBot.client.searchFiles({ query: QUESTION, contextDepth: 0 });
      assert.ok(
        words.passages.every((p) => !p.content.includes('Vehicles')),
        'full-text search alone does not find it',
      );
      // Words still count: a question by its words finds its passage first.
      const lunch = await bot.client.searchFiles({ query: 'when is lunch served', contextDepth: 0 });
      assert.match(lunch.passages[0]?.content ?? '', /cafeteria serves lunch/);
      assert.equal(isRecord(lunch) && lunch.warnings, undefined, 'ranked as the server ranks: no warning');
    });

    test('hybrid: a paraphrase finds its answer first though another passage shares its words; a literal question its own', async () => {
      // Words of QUESTION but not its meaning: full text ranks it first, meaning far below the passage
      // about vehicles (reciprocal rank fusion ranked it first, as both rankings hold it).
      const LAPTOPS = 'You can bring your laptop to meetings.';
      const kbTags = { source: 'knowledge-base', kbId };
      const mine = await upload(bot, 'laptops.md', LAPTOPS, kbTags);
      const plainLaptops = await upload(plainBot, 'laptops.md', LAPTOPS, kbTags);
      await embeddedFile(semantic, bot.client, mine);
      await fileSettled(plainBot.client, plainLaptops);
      try {
        const ask = (b: TestBot, query: string) =>
          b.client.searchFiles({ query, tags: { kbId }, contextDepth: 0 });
        const byWords = await ask(plainBot, QUESTION);
        assert.equal(
          byWords.passages[0]?.content,
          LAPTOPS,
          'full text ranks the passage that shares words first',
        );

        const { passages } = await ask(bot, QUESTION);
        assert.match(passages[0]?.content ?? '', /^Vehicles may be left in the north lot/);
        assert.ok(
          passages.some((p) => p.content === LAPTOPS),
          'the passage that shares words is still answered',
        );
        assert.ok(passages.every((p) => p.score >= 0 && p.score <= 1));
        const literal = await ask(bot, 'bring your laptop to meetings');
        assert.equal(literal.passages[0]?.content, LAPTOPS);
      } finally {
        await bot.client.deleteFile({ id: mine });
        await plainBot.client.deleteFile({ id: plainLaptops });
      }
    });

    test('passages are embedded in batches, off the upload, and their texts under their headings', () => {
      const texts = embedded(models);
      assert.ok(
        texts.includes(
          '# Visitors\n## Parking\nVehicles may be left in the north lot, free of charge, during opening hours.',
        ),
      );
      assert.ok(
        models.requests.some((r) => inputsOf(r).length > 1),
        'several passages in one request',
      );
    });

    test('every searchFiles option is honoured on a hit found by meaning', async () => {
      const { passages } = await bot.client.searchFiles({
        query: QUESTION,
        tags: { kbId },
        limit: 1,
        contextDepth: 1,
        withContext: true,
        includeBreadcrumb: true,
      });
      assert.equal(passages.length, 1);
      const [hit] = passages;
      assert.equal(hit?.meta.subtype, 'paragraph');
      assert.deepEqual(
        hit?.context?.map((c) => [c.type, c.text]),
        [
          ['breadcrumb', '# Visitors'],
          ['breadcrumb', '## Parking'],
          ['preceding', '## Parking'],
          ['current', 'Vehicles may be left in the north lot, free of charge, during opening hours.'],
          ['subsequent', '## Garden'],
        ],
      );
      assert.match(hit?.content ?? '', /^Visitors > Parking\n\n## Parking\n\nVehicles/);
      const other = await bot.client.searchFiles({ query: QUESTION, tags: { kbId: 'kb_none' } });
      assert.deepEqual(other.passages, [], 'the tag filter holds');
      const [consolidated] = (await bot.client.searchFiles({ query: QUESTION, consolidate: true, limit: 1 }))
        .passages;
      assert.equal(consolidated?.meta.type, 'consolidated');
      assert.match(consolidated?.content ?? '', /Vehicles/);
    });

    test('a long file is embedded 64 passages a request at most, every passage once', async () => {
      const id = await upload(bot, 'long.md', 'A long file.');
      await embeddedFile(semantic, bot.client, id);
      const mark = models.requests.length;
      const passages = Array.from({ length: 70 }, (_, i) => ({ content: `Room ${i} is on floor ${i % 7}.` }));
      await bot.client.setFilePassages({ id, passages });
      await embeddedFile(semantic, bot.client, id);
      const requests = models.requests.slice(mark).filter((r) => inputsOf(r).length > 0);
      assert.ok(requests.length >= 2, `${requests.length} requests`);
      assert.ok(requests.every((r) => inputsOf(r).length <= 64));
      assert.deepEqual(embedded(models, mark).sort(), passages.map((p) => p.content).sort());
      await bot.client.deleteFile({ id });
    });

    test('the same text is embedded once per bot: a copy under another key sends nothing', async () => {
      const mark = models.requests.length;
      const id = await upload(bot, 'visitors-again.md', VISITORS);
      await embeddedFile(semantic, bot.client, id);
      assert.deepEqual(embedded(models, mark), [], 'no text sent again');
      await bot.client.deleteFile({ id });
    });

    test('indexing again replaces the vectors; a deleted file takes its vectors with it', async () => {
      const id = await upload(bot, 'shuttle.md', 'Automobiles are washed on Fridays.');
      await embeddedFile(semantic, bot.client, id);
      const first = await bot.client.searchFiles({ query: 'car wash', limit: 1, contextDepth: 0 });
      assert.equal(first.passages[0]?.file.key, 'shuttle.md');

      await bot.client.setFilePassages({ id, passages: [{ content: 'Bicycles are repaired on Mondays.' }] });
      await embeddedFile(semantic, bot.client, id);
      const passages = await bot.client.list.filePassages({ id }).collect();
      const stored = await semantic.server.store.db
        .selectFrom('passage_vectors')
        .select('passage_id')
        .where('file_id', '=', id)
        .execute();
      assert.deepEqual(
        stored.map((v) => v.passage_id),
        passages.map((p) => p.id),
        'only the new passages have vectors',
      );
      const again = await bot.client.searchFiles({ query: QUESTION, contextDepth: 0 });
      assert.ok(again.passages.every((p) => !p.content.includes('Automobiles')));

      await bot.client.deleteFile({ id });
      assert.equal(await vectorsOf(semantic, id), 0);
    });

    test('the provider down: search answers by words; indexing completes and embeds once it is back', async () => {
      // A provider that repeats the key in its error: it is never kept nor logged.
      models.fail(
        { kind: 'status', status: 503, error: { message: `overloaded (key ${API_KEY})` } },
        { path: '/v1/embeddings', times: Infinity },
      );
      try {
        const mark = models.requests.length;
        const lunch = await bot.client.searchFiles({ query: 'when is lunch served', contextDepth: 0 });
        assert.match(lunch.passages[0]?.content ?? '', /cafeteria serves lunch/);
        assert.ok(embedded(models, mark).length > 0, 'the query was sent to be embedded, and failed');
        // The answer says how it was ranked (the official client passes the field through).
        assert.deepEqual(isRecord(lunch) && lunch.warnings, [RANKED_BY_WORDS_ALONE]);
        const byMeaning = await bot.client.searchFiles({ query: QUESTION, contextDepth: 0 });
        assert.ok(
          byMeaning.passages.every((p) => !p.content.includes('Vehicles')),
          'words alone answer',
        );

        const id = await upload(bot, 'badges.md', 'Replacement badges carry a fee of ten euros.');
        await fileSettled(bot.client, id);
        const byWords = await bot.client.searchFiles({ query: 'badges', contextDepth: 0 });
        assert.equal(byWords.passages[0]?.file.key, 'badges.md', 'found by its words while not embedded');
        await waitFor('an embedding attempt of the new file', async () =>
          embedded(models, mark).includes('Replacement badges carry a fee of ten euros.'),
        );
        assert.equal(await vectorsOf(semantic, id), 0);
        const job = await waitFor('the failure recorded on the job', () =>
          semantic.server.store.db
            .selectFrom('embedding_jobs')
            .selectAll()
            .where('id', '=', id)
            .where('attempts', '>', 0)
            .executeTakeFirst(),
        );
        assert.equal(job.status, 'pending');
        assert.match(job.last_error ?? '', /answered 503: overloaded \(key \[redacted\]\)/);
        assert.ok(!(job.last_error ?? '').includes(API_KEY));
        assert.ok(job.next_attempt_at > job.updated_at, 'due again after a backoff');
        models.clearFailures();
        // Tried again after the backoff (5 s after a first failure).
        await waitFor(
          'the new file to be embedded',
          async () => (await vectorsOf(semantic, id)) === 1,
          20_000,
        );
        const found = await bot.client.searchFiles({
          query: 'What is the price?',
          limit: 1,
          contextDepth: 0,
        });
        assert.equal(found.passages[0]?.file.key, 'badges.md');
        await bot.client.deleteFile({ id });
      } finally {
        models.clearFailures();
      }
    });

    test("another workspace's vectors are never ranked, nor reused", async () => {
      const admin = semantic.client();
      const other = await admin.createWorkspace({ name: 'elsewhere' });
      const otherAdmin = semantic.client({ workspaceId: other.id });
      const { bot: theirBot } = await otherAdmin.createBot({ name: 'their-bot' });
      const { value } = await otherAdmin.createBotApiKey({ botId: theirBot.id });
      const theirs: TestBot = {
        botId: theirBot.id,
        key: value,
        client: semantic.client({ token: value, botId: theirBot.id, workspaceId: undefined }),
      };
      const mark = models.requests.length;
      const secret = 'Vehicles of the board park in the private basement.';
      const theirFile = await upload(theirs, 'garage.md', secret);
      const sameText = await upload(theirs, 'visitors.md', VISITORS);
      await embeddedFile(semantic, theirs.client, theirFile);
      await embeddedFile(semantic, theirs.client, sameText);
      assert.ok(
        embedded(models, mark).some((text) => text.includes('Vehicles may be left in the north lot')),
        'a text another bot embedded is embedded again for this one',
      );
      const mine = await bot.client.searchFiles({ query: QUESTION, limit: 50, contextDepth: 0 });
      assert.ok(mine.passages.length > 0);
      assert.ok(
        mine.passages.every((p) => !p.content.includes('basement')),
        'their passages are not ranked',
      );
      assert.ok(mine.passages.every((p) => p.file.id !== theirFile && p.file.id !== sameText));
      const their = await theirs.client.searchFiles({ query: QUESTION, limit: 50, contextDepth: 0 });
      assert.ok(their.passages.every((p) => [theirFile, sameText].includes(p.file.id)));
    });

    test('PARLEY_SEARCH_RANKING: by words alone the question is not found, by meaning alone it is', async () => {
      const ask = () => bot.client.searchFiles({ query: QUESTION, tags: { kbId }, contextDepth: 0 });
      let cosine = 0;
      try {
        await semantic.restart({ searchRanking: 'words' });
        const words = await ask();
        assert.ok(words.passages.every((p) => !p.content.includes('Vehicles')));
        await semantic.restart({ searchRanking: 'meaning' });
        const meaning = await ask();
        assert.match(meaning.passages[0]?.content ?? '', /^Vehicles may be left in the north lot/);
        cosine = meaning.passages[0]?.score ?? 0;
        // The knowledge card's search asks for answers alone: every passage ranked by meaning but the
        // headings (which the search's vector index leaves out, in memory on PostgreSQL).
        const subtypes = async (answersOnly: boolean) =>
          (
            await semantic.server.domain.fileSearch.search(
              { botId: bot.botId, workspaceId: semantic.workspaceId },
              { query: QUESTION, tags: { kbId }, contextDepth: 0, limit: 50, answersOnly },
            )
          ).passages.map((p) => p.meta.subtype);
        const heading = (subtype: string | undefined) => subtype === 'title' || subtype === 'subtitle';
        assert.ok((await subtypes(false)).some(heading));
        const answers = await subtypes(true);
        assert.ok(answers.length > 0 && !answers.some(heading), answers.join());
      } finally {
        await semantic.restart({ searchRanking: 'hybrid' });
      }
      // Fused: the passage shares no word with the question, so its score is meaning's share of its
      // cosine similarity alone.
      const hybrid = await ask();
      assert.match(hybrid.passages[0]?.content ?? '', /^Vehicles may be left in the north lot/);
      assert.ok(cosine > 0);
      assert.ok(Math.abs((hybrid.passages[0]?.score ?? 0) - MEANING_WEIGHT * cosine) < 1e-6);
    });
  });
}
