// An SDK bot that answers with a language model: its handler calls `@botpress/cognitive` (bundled by
// `bp build`, as a user's project would), deployed with `bp deploy`, talked to with the official chat
// client; Parley's gateway answers its model calls with the operator's provider (the test model server).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatUrlOf, deployWithBp, initBotProject } from '../helpers/bp-cli.ts';
import { ChatSession } from '../helpers/chat-bots.ts';
import { logsSince } from '../helpers/deployed-bots.ts';
import { parleySettings, startModelServer } from '../helpers/model-server.ts';
import type { ModelServer } from '../helpers/model-server.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { testStores } from '../helpers/stores.ts';

/** A bot in SDK 0.10's style whose every answer is the model's, through cognitive's Cognitive API path. */
const LLM_BOT = `import { Bot, z } from '@botpress/sdk'
import { Client } from '@botpress/client'
import { Cognitive } from '@botpress/cognitive'

const bot = new Bot({ integrations: {}, configuration: { schema: z.object({}) }, states: {}, events: {}, recurringEvents: {} })

bot.message(async ({ message, client, ctx }) => {
  const api = new Client({ apiUrl: process.env.BP_API_URL, token: process.env.BP_TOKEN, botId: ctx.botId })
  const cognitive = new Cognitive({ client: api, __experimental_beta: true })
  const { output } = await cognitive.generateContent({
    model: 'best',
    systemPrompt: 'You are a helpful support agent.',
    messages: [{ role: 'user', content: (message.payload as { text: string }).text }],
  })
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: String(output.choices[0]?.content ?? '') },
  })
})

export default bot
`;

const project = await initBotProject('llm-bot', LLM_BOT);
after(() => project.remove());

const noSandbox = await sandboxSkip();
const [sqlite] = await testStores();

describe(
  'an SDK bot whose handler calls @botpress/cognitive',
  { skip: sqlite?.skip ?? noSandbox, timeout: 600_000 },
  () => {
    let models: ModelServer;
    let t: TestServer;
    let session: ChatSession | undefined;
    before(async () => {
      models = await startModelServer();
      if (!sqlite) throw new Error('no store to test on');
      t = await startTestServer(sqlite, parleySettings(models));
    });
    after(async () => {
      await session?.close();
      await t?.close();
      await models?.close();
    });

    test('deployed with bp deploy, it answers a chat message with the model’s text', async () => {
      const since = new Date().toISOString();
      const { bot } = await t.client().createBot({ name: 'sdk llm bot' });
      assert.match(await deployWithBp(t, project, bot.id), /Bot deployed/);
      models.replyWhen('opening hours', 'We are open from 9 to 5, Monday to Friday.');
      session = await ChatSession.open(await chatUrlOf(t, bot.id));
      await session.say('What are your opening hours?');
      const replies = await session.nextTexts(1, 60_000).catch(async (err: unknown) => {
        // What the bot logged says why it did not answer.
        const logs = (await logsSince(t, bot.id, since)).map((l) => `${l.level}: ${l.message}`);
        throw new Error(`${String(err)}\nbot logs:\n${logs.join('\n')}`);
      });
      assert.deepEqual(replies, ['We are open from 9 to 5, Monday to Friday.']);
      const call = models.requests.find((r) => r.path === '/v1/chat/completions');
      assert.match(JSON.stringify(call?.body), /You are a helpful support agent/);
    });
  },
);
