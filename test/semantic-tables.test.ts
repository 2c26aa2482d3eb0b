import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '@botpress/client';
import { RANKED_BY_WORDS_ALONE } from '../src/domain/embeddings/ranking.ts';
import { fileSettled } from './helpers/files.ts';
import { isRecord } from './helpers/model-request.ts';
import { SYNONYMS } from './helpers/model-embeddings.ts';
import { DEFAULT_MODELS, parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer, ReceivedRequest } from './helpers/model-server.ts';
import { createTestBot, waitFor } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

// The test embedder (helpers/model-embeddings.ts) gives `car` and `vehicles` one meaning: the question
// shares no word with the row that answers it, so only a search by meaning finds it. Model B knows that
// a laptop is a computer, which model A does not: by A, "Who fixes my laptop?" is closest to the lunch
// row (by chance of its trigrams), by B to the computers row.
const API_KEY = 'sk-test-embeddings-key';
const MODEL_A = 'test-embeddings';
const MODEL_B = 'test-embeddings-b';
const QUESTION = 'Can I bring my car?';
const LAPTOP = 'Who fixes my laptop?';
const NOTES = [
  'Vehicles may be left in the north lot, free of charge.',
  'Dogs on a leash are welcome in the garden.',
  'Lunch is served between noon and two.',
  'Computers are repaired on Mondays.',
];
const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    note: { type: 'string', 'x-zui': { searchable: true } },
  },
};

/** The model and texts of one request to `POST /embeddings` (none for another request). */
function embeddingsOf(request: ReceivedRequest): { model: string; texts: string[] } | undefined {
  if (request.path !== '/v1/embeddings' || !isRecord(request.body)) return undefined;
  const { input, model } = request.body;
  return { model: String(model), texts: Array.isArray(input) ? input.map(String) : [String(input)] };
}

function embedded(models: ModelServer, from = 0): { model: string; texts: string[] }[] {
  return models.requests.slice(from).flatMap((r) => embeddingsOf(r) ?? []);
}

async function vectorsOf(t: TestServer, tableId: string) {
  return t.server.store.db
    .selectFrom('row_vectors')
    .select(['row_id', 'model', 'dimension', 'content_hash'])
    .where('table_id', '=', tableId)
    .orderBy('row_id')
    .execute();
}

/** Waits until each row of the table has one vector, of `model`. */
async function embeddedRows(t: TestServer, b: TestBot, table: string, model = `default:${MODEL_A}`) {
  const { rows } = await b.client.findTableRows({ table, limit: 1000 });
  const { table: found } = await b.client.getTable({ table });
  await waitFor(
    `the rows of ${table} to be embedded by ${model}`,
    async () => {
      const vectors = await vectorsOf(t, found.id);
      return vectors.length === rows.length && vectors.every((v) => v.model === model);
    },
    30_000,
  );
  return found.id;
}

async function notesTable(b: TestBot, name: string, notes = NOTES): Promise<void> {
  await b.client.createTable({ name, schema: SCHEMA });
  await b.client.createTableRows({
    table: name,
    rows: notes.map((note, i) => ({ name: `note-${i}`, note })),
  });
}

const notesOf = (rows: Record<string, unknown>[]) => rows.map((r) => r.note);

for (const store of await testStores()) {
  describe(`semantic search of table rows (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let semantic: TestServer;
    let plain: TestServer;
    let bot: TestBot;
    let plainBot: TestBot;
    let tableId: string;

    before(async () => {
      models = await startModelServer({
        apiKey: API_KEY,
        models: [...DEFAULT_MODELS, MODEL_B],
        embeddingModels: {
          [MODEL_B]: { dimensions: 32, synonyms: { ...SYNONYMS, laptop: 'computer', computers: 'computer' } },
        },
      });
      const settings = { ...parleySettings(models), llmApiKey: API_KEY };
      semantic = await startTestServer(store, { ...settings, embeddingsModel: MODEL_A });
      plain = await startTestServer(store, settings);
      bot = await createTestBot(semantic, 'semantic-bot');
      plainBot = await createTestBot(plain, 'plain-bot');
      await notesTable(bot, 'Notes');
      await notesTable(plainBot, 'Notes');
      tableId = await embeddedRows(semantic, bot, 'Notes');
    });
    after(async () => {
      await semantic?.close();
      await plain?.close();
      await models?.close();
    });

    test('a row that shares no word with the query is found by meaning, similarity in [0, 1], best first', async () => {
      const { rows, warnings } = await bot.client.findTableRows({ table: 'Notes', search: QUESTION });
      assert.equal(rows[0]?.note, NOTES[0]);
      assert.equal(warnings, undefined, 'ranked as the server ranks: no warning');
      const similarities = rows.map((r) => r.similarity ?? -1);
      assert.equal(similarities[0], 1);
      assert.ok(
        similarities.every((s) => s >= 0 && s <= 1),
        `${similarities.join(', ')}`,
      );
      assert.deepEqual(
        similarities,
        [...similarities].sort((a, b) => b - a),
        'best first',
      );
      const words = await plainBot.client.findTableRows({ table: 'Notes', search: QUESTION });
      assert.ok(!notesOf(words.rows).includes(NOTES[0]), 'full-text search alone does not find it');
      // Words still count, and a filter still holds.
      const lunch = await bot.client.findTableRows({ table: 'Notes', search: 'when is lunch served' });
      assert.equal(lunch.rows[0]?.note, NOTES[2]);
      const filtered = await bot.client.findTableRows({
        table: 'Notes',
        search: QUESTION,
        filter: { name: 'note-1' },
      });
      assert.deepEqual(notesOf(filtered.rows), [NOTES[1]]);
    });

    test('the rows were embedded off their write, and the calls count as the bot’s model calls', async () => {
      const texts = embedded(models).flatMap((e) => e.texts);
      for (const note of NOTES) assert.ok(texts.includes(note), note);
      const calls = await semantic.server.store.db
        .selectFrom('llm_calls')
        .selectAll()
        .where('bot_id', '=', bot.botId)
        .where('model', '=', `default:${MODEL_A}`)
        .execute();
      assert.ok(calls.length >= 2, 'the indexing call and the queries');
      assert.ok(calls.every((c) => c.workspace_id === semantic.workspaceId && c.output_tokens === 0));
      assert.ok(calls.some((c) => c.input_tokens > 0));
    });

    test('an update of the searchable text embeds the row again; of another column, nothing', async () => {
      const { rows } = await bot.client.findTableRows({ table: 'Notes', filter: { name: 'note-0' } });
      const id = rows[0]?.id ?? 0;
      let mark = models.requests.length;
      await bot.client.updateTableRows({ table: 'Notes', rows: [{ id, name: 'parking' }] });
      const before = await vectorsOf(semantic, tableId);
      assert.equal(before.length, NOTES.length, 'the vector is kept');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.deepEqual(embedded(models, mark), [], 'nothing sent again');

      mark = models.requests.length;
      const changed = 'Automobiles are washed on Fridays.';
      await bot.client.updateTableRows({ table: 'Notes', rows: [{ id, note: changed }] });
      await waitFor('the new text to be embedded', async () => {
        const vector = (await vectorsOf(semantic, tableId)).find((v) => v.row_id === id);
        return vector && vector.content_hash !== before.find((v) => v.row_id === id)?.content_hash;
      });
      assert.deepEqual(
        embedded(models, mark).flatMap((e) => e.texts),
        [changed],
      );
      const found = await bot.client.findTableRows({ table: 'Notes', search: 'car wash', limit: 1 });
      assert.equal(found.rows[0]?.note, changed);
      await bot.client.updateTableRows({ table: 'Notes', rows: [{ id, note: NOTES[0] }] });
      await embeddedRows(semantic, bot, 'Notes');
    });

    test('deleting rows, or the table, removes their vectors', async () => {
      await notesTable(bot, 'Scratch');
      const scratchId = await embeddedRows(semantic, bot, 'Scratch');
      const { rows } = await bot.client.findTableRows({ table: 'Scratch', filter: { name: 'note-0' } });
      await bot.client.deleteTableRows({ table: 'Scratch', ids: rows.map((r) => r.id) });
      const left = await vectorsOf(semantic, scratchId);
      assert.equal(left.length, NOTES.length - 1);
      assert.ok(!left.some((v) => v.row_id === rows[0]?.id));
      await bot.client.deleteTableRows({ table: 'Scratch', filter: { name: 'note-1' } });
      assert.equal((await vectorsOf(semantic, scratchId)).length, NOTES.length - 2);
      await bot.client.deleteTable({ table: 'Scratch' });
      assert.equal((await vectorsOf(semantic, scratchId)).length, 0);
    });

    test("another workspace's rows are never answered, nor their vectors reused", async () => {
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
      await notesTable(theirs, 'Notes', [secret, NOTES[0] ?? '']);
      await embeddedRows(semantic, theirs, 'Notes');
      assert.ok(
        embedded(models, mark).some((e) => e.texts.includes(NOTES[0] ?? '')),
        'a text another bot embedded is embedded again for this one',
      );
      const mine = await bot.client.findTableRows({ table: 'Notes', search: QUESTION, limit: 50 });
      assert.ok(!notesOf(mine.rows).includes(secret));
      const their = await theirs.client.findTableRows({ table: 'Notes', search: QUESTION, limit: 50 });
      assert.ok(notesOf(their.rows).includes(secret));
      assert.ok(notesOf(their.rows).every((n) => n === secret || n === NOTES[0]));
    });

    test('the provider down: findTableRows answers from full-text, never a server error', async () => {
      models.fail({ kind: 'status', status: 503 }, { path: '/v1/embeddings', times: Infinity });
      try {
        const mark = models.requests.length;
        const lunch = await bot.client.findTableRows({ table: 'Notes', search: 'when is lunch served' });
        assert.equal(lunch.rows[0]?.note, NOTES[2]);
        assert.ok(embedded(models, mark).length > 0, 'the query was sent to be embedded, and failed');
        assert.deepEqual(lunch.warnings, [RANKED_BY_WORDS_ALONE], 'the answer says how it was ranked');
        const byMeaning = await bot.client.findTableRows({ table: 'Notes', search: QUESTION });
        assert.ok(!notesOf(byMeaning.rows).includes(NOTES[0]), 'words alone answer');
      } finally {
        models.clearFailures();
      }
    });

    test('deleting a knowledge base deletes its files and their vectors', async () => {
      const { knowledgeBase } = await bot.client.createKnowledgeBase({ name: 'Parking' });
      const { file } = await bot.client.uploadFile({
        key: 'parking.md',
        content: NOTES[0] ?? '',
        index: true,
        tags: { source: 'knowledge-base', kbId: knowledgeBase.id },
      });
      await fileSettled(bot.client, file.id);
      const vectors = () =>
        semantic.server.store.db
          .selectFrom('passage_vectors')
          .select('passage_id')
          .where('file_id', '=', file.id)
          .execute();
      await waitFor('the file to be embedded', async () => (await vectors()).length > 0);
      await bot.client.deleteKnowledgeBase({ id: knowledgeBase.id });
      assert.equal((await vectors()).length, 0);
      await assert.rejects(bot.client.getFile({ id: file.id }), (err) => isApiError(err) && err.code === 404);
      const { passages } = await bot.client.searchFiles({ query: QUESTION });
      assert.ok(passages.every((p) => p.file.id !== file.id));
    });

    test('a new model: rows and files are embedded again, search answers from the old vectors meanwhile, then by the new model', async () => {
      const { file } = await bot.client.uploadFile({
        key: 'notes.md',
        content: NOTES.join('\n\n'),
        index: true,
      });
      await fileSettled(bot.client, file.id);
      await waitFor('the file to be embedded', async () => {
        const rows = await semantic.server.store.db
          .selectFrom('passage_vectors')
          .select('model')
          .where('file_id', '=', file.id)
          .execute();
        return rows.length > 0;
      });
      const byA = await bot.client.findTableRows({ table: 'Notes', search: LAPTOP });
      assert.equal(byA.rows[0]?.note, NOTES[2], 'model A ranks the lunch row first');

      // Model B fails at first: its vectors cannot be made yet.
      models.fail(
        { kind: 'status', status: 503 },
        { path: '/v1/embeddings', model: MODEL_B, times: Infinity },
      );
      try {
        await semantic.restart({ embeddingsModel: MODEL_B });
        await waitFor('a re-embedding attempt', async () =>
          embedded(models).some((e) => e.model === MODEL_B && e.texts.includes(NOTES[1] ?? '')),
        );
        const mark = models.requests.length;
        const meanwhile = await bot.client.findTableRows({ table: 'Notes', search: LAPTOP });
        assert.equal(meanwhile.rows[0]?.note, NOTES[2], 'still ranked by model A');
        const car = await bot.client.findTableRows({ table: 'Notes', search: QUESTION });
        assert.equal(car.rows[0]?.note, NOTES[0], 'found by meaning meanwhile');
        const passage = await bot.client.searchFiles({ query: QUESTION, contextDepth: 0, limit: 1 });
        assert.match(passage.passages[0]?.content ?? '', /^Vehicles/);
        assert.ok(
          embedded(models, mark)
            .filter((e) => e.texts.includes(LAPTOP) || e.texts.includes(QUESTION))
            .every((e) => e.model === MODEL_A),
          'queries are embedded by the model of the vectors they are compared with',
        );
      } finally {
        models.clearFailures();
      }
      // Tried again after the backoff: every vector is B's then, of its dimension, and A's are gone.
      await embeddedRows(semantic, bot, 'Notes', `default:${MODEL_B}`);
      const vectors = await vectorsOf(semantic, tableId);
      assert.ok(vectors.every((v) => v.dimension === 32));
      await waitFor(
        'the file embedded by B',
        async () => {
          const rows = await semantic.server.store.db
            .selectFrom('passage_vectors')
            .select('model')
            .where('file_id', '=', file.id)
            .execute();
          return rows.length > 0 && rows.every((r) => r.model === `default:${MODEL_B}`);
        },
        30_000,
      );
      const byB = await bot.client.findTableRows({ table: 'Notes', search: LAPTOP });
      assert.equal(byB.rows[0]?.note, NOTES[3], 'model B ranks the computers row first');
      const passages = await bot.client.searchFiles({ query: LAPTOP, contextDepth: 0, limit: 1 });
      assert.match(passages.passages[0]?.content ?? '', /^Computers/);
    });
  });
}
