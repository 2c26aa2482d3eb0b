// When an AI card's turn writes its checkpoint (src/engine/turn.ts, callClient): not while its first
// model call runs, since a turn tried again would ask the model again from any checkpoint written then
// (it holds no answer of the call); while a later model call of the same turn runs, since that checkpoint
// keeps the earlier answer the turn has used. Seen through the Runtime API's states (the conversation's
// dialog and variables) while the model answers; on both stores.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { oneNodePackage, send, startChat, stateOf, waitForReplies } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { completionsAbout, modelBotSuite } from './helpers/model-bots.ts';
import type { ModelServer, ReceivedRequest } from './helpers/model-server.ts';
import { waitFor } from './helpers/runtime.ts';
import { testStores } from './helpers/stores.ts';

/** How long each model call takes: the states are read meanwhile (room for a busy machine). */
const MODEL_MS = 2500;

const twoCards = oneNodePackage('two-model-calls', [
  { type: 'aiGenerate', instructions: 'First.', model: 'best', variable: 'conversation.first' },
  {
    type: 'aiGenerate',
    instructions: 'Second.',
    context: 'The first said: {{ conversation.first }}',
    model: 'fast',
  },
]);

/** The model server's first chat completion of `model`, once it is asked. */
async function asked(models: ModelServer, model: string): Promise<ReceivedRequest> {
  return waitFor(`a call of ${model}`, async () => completionsAbout(models, `"${model}"`)[0]);
}

const dialogOf = (bot: DeployedBot, c: Chatter) =>
  stateOf(bot, 'parley:dialog', 'conversation', c.runtimeConversationId);
const variablesOf = (bot: DeployedBot, c: Chatter) =>
  stateOf(bot, 'variables', 'conversation', c.runtimeConversationId);

for (const store of await testStores()) {
  describe(`an AI card's turn and its checkpoint (${store.name})`, { skip: store.skip }, () => {
    const suite = modelBotSuite(store, () => twoCards);

    test('the first model call runs with nothing written; the second while the first answer is', async () => {
      const { models, bot } = suite;
      models.replyWhen((call) => call.model === 'test-best', 'The first answer.');
      models.replyWhen((call) => call.model === 'test-fast', 'The second answer.');
      models.fail({ kind: 'latency', ms: MODEL_MS }, { times: 2, path: '/v1/chat/completions' });
      const chatter = await startChat(bot);
      await send(chatter, 'hello');

      const first = await asked(models, 'test-best');
      assert.equal(await dialogOf(bot, chatter), undefined, 'no checkpoint while the first call runs');
      assert.equal(await variablesOf(bot, chatter), undefined);
      assert.equal(first.outcome, undefined, 'read while the first call ran');

      const second = await asked(models, 'test-fast');
      // Written while the second call runs (and awaited with it): it may still be on its way here.
      await waitFor('the first answer stored', async () => (await variablesOf(bot, chatter)) !== undefined);
      assert.equal(second.outcome, undefined, 'stored before the second call was answered');
      assert.deepEqual(await variablesOf(bot, chatter), { first: 'The first answer.' });
      assert.notEqual(await dialogOf(bot, chatter), undefined);

      assert.deepEqual(await waitForReplies(bot, chatter, 1), ['The second answer.']);
      assert.match(JSON.stringify(second.body), /The first said: The first answer\./);
    });
  });
}
