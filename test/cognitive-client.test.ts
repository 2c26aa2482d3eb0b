// The published LLM libraries against Parley, unchanged: `@botpress/cognitive` 0.5.4 in its default mode
// (the `llm` integration through callAction, its preferences file in the Files API) and in its beta mode
// (the Cognitive API), and `@botpress/zai` 2.6.21 over it, answered by the project's test model server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cognitive } from '@botpress/cognitive';
import { Zai } from '@botpress/zai';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** The chat completions the provider received, as the JSON of their bodies. */
function promptsSeen(models: ModelServer): string[] {
  return models.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => JSON.stringify(r.body));
}

for (const store of await testStores()) {
  describe(
    `@botpress/cognitive and @botpress/zai against Parley (${store.name})`,
    { skip: store.skip },
    () => {
      let models: ModelServer;
      let t: TestServer;
      let bot: TestBot;
      before(async () => {
        models = await startModelServer();
        t = await startTestServer(store, parleySettings(models));
        bot = await createTestBot(t, 'cognitive-client-bot');
      });
      after(async () => {
        await t?.close();
        await models?.close();
      });

      test('the default mode finds the llm integration with getBot, keeps its preferences in the Files API and calls generateContent', async () => {
        // Bot code's client carries its bot's id (the SDK's does); cognitive reads it there.
        const client = Object.assign(t.client({ botId: bot.botId }), { botId: bot.botId });
        const cognitive = new Cognitive({ client });
        models.reply('Bonjour!');
        const { output, meta } = await cognitive.generateContent({
          model: 'best',
          systemPrompt: 'Translate to French.',
          messages: [{ role: 'user', content: 'Hello!' }],
        });
        assert.equal(output.choices[0]?.content, 'Bonjour!');
        assert.deepEqual(meta.model, { integration: 'llm', model: 'test-best' });
        assert.ok(meta.tokens.input > 0);

        const { file } = await client.getFile({ id: `bot->${bot.botId}->models.config.json` });
        const preferences = (await (await fetch(file.url)).json()) as { best: string[]; fast: string[] };
        assert.equal(preferences.best[0], 'llm:test-best', 'best ranks the best model first');
        assert.equal(preferences.fast[0], 'llm:test-fast', 'fast ranks the fast model first');

        const fast = await cognitive.generateContent({
          model: 'fast',
          messages: [{ role: 'user', content: 'quick one' }],
        });
        assert.deepEqual(fast.meta.model, { integration: 'llm', model: 'test-fast' });
      });

      test('the beta mode calls the Cognitive API with a bot’s key', async () => {
        const cognitive = new Cognitive({
          client: Object.assign(bot.client, { botId: bot.botId }),
          __experimental_beta: true,
        });
        models.reply('from the v2 path');
        const { output, meta } = await cognitive.generateContent({
          model: 'fast',
          systemPrompt: 'Be brief.',
          messages: [{ role: 'user', content: 'v2 please' }],
          stopSequences: ['END'],
        });
        assert.equal(output.choices[0]?.content, 'from the v2 path');
        assert.equal(meta.model.model, 'default:test-fast');
        const sent = promptsSeen(models).at(-1) ?? '';
        assert.match(sent, /"stop":\["END"\]/);
        assert.match(sent, /"role":"system","content":"Be brief\."/);
      });

      test('zai’s check runs through cognitive’s beta mode on a provider that only honours stop sequences', async () => {
        const cognitive = new Cognitive({
          client: Object.assign(bot.client, { botId: bot.botId }),
          __experimental_beta: true,
        });
        const zai = new Zai({ client: cognitive });
        // Zai asks for its verdict between markers and stops the model at ■END■: a provider that honours
        // `stop` is all it needs (no tools, no JSON mode).
        models.replyWhen(
          (call) => call.stop.includes('■END■'),
          'Analysis: they want their money back.\nFinal Answer: ■TRUE■\n■END■ trailing',
        );
        const verdict = await zai.check(
          'I want a refund for my order',
          'is the customer asking for money back?',
        );
        assert.equal(verdict, true);
        assert.ok(
          promptsSeen(models).some((p) => p.includes('refund')),
          'zai’s prompt reached the provider',
        );
      });
    },
  );
}
