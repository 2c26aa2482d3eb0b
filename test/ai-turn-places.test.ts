// Turns that wait on a model do not hold the engine's places: with 2 places and 4 turns allowed to wait
// away from theirs, 10 conversations whose AI card's model answers in 1.5 s have 6 model calls in flight
// at once (4 away, 2 that found no room away and wait in their places), not 2; every reply arrives.
// Through the Chat API, on both stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deployPackage, json, send, startChat, waitForReplies } from './helpers/deployed-bots.ts';
import type { DeployedBot } from './helpers/deployed-bots.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const PLACES = 2;
const WAITING = 4;
const CONVERSATIONS = 10;
const MODEL_MS = 1500;

const aiBot = {
  'bot.json': json({ formatVersion: 1, name: 'slow-model-bot' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: [{ to: 'answer' }] },
      {
        id: 'answer',
        type: 'standard',
        cards: [{ type: 'aiGenerate', instructions: 'Answer in one line.', model: 'fast' }],
      },
    ],
  }),
};

for (const store of await testStores()) {
  describe(`turns waiting on a model (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let t: TestServer;
    let bot: DeployedBot;
    before(async () => {
      models = await startModelServer();
      t = await startTestServer(store, {
        ...parleySettings(models),
        engineConcurrency: String(PLACES),
        engineWaitingTurns: String(WAITING),
      });
      bot = await deployPackage(t, aiBot);
    });
    after(async () => {
      await t?.close();
      await models?.close();
    });

    test('leave their places to other turns, as many as allowed; every reply arrives', async () => {
      const chatters = [];
      for (let i = 0; i < CONVERSATIONS; i++) chatters.push(await startChat(bot));
      models.fail({ kind: 'latency', ms: MODEL_MS }, { times: Infinity, path: '/v1/chat/completions' });
      const completions = () => models.requests.filter((r) => r.path === '/v1/chat/completions');
      let most = 0;
      const watch = setInterval(() => {
        most = Math.max(most, completions().filter((r) => r.outcome === undefined).length);
      }, 20);
      try {
        await Promise.all(chatters.map((chatter, i) => send(chatter, `question ${i}`)));
        const answers = await Promise.all(chatters.map((chatter) => waitForReplies(bot, chatter, 1, 60_000)));
        assert.deepEqual(
          answers.map((texts) => texts[0]),
          chatters.map((_, i) => `echo: question ${i}`),
        );
      } finally {
        clearInterval(watch);
      }
      assert.equal(completions().length, CONVERSATIONS);
      assert.equal(most, PLACES + WAITING, 'model calls in flight at once');
    });
  });
}
