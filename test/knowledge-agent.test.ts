// examples/knowledge-agent as its README uses it: deployed with `parley deploy` (its kb/ documents become
// the knowledge base, its table is created), the demo orders imported with `parley tables import`, then
// asked over the Chat API, on both stores, the tests' model server standing in for the model: a question
// answered from its documents (the passage and its link in what the model was given, the citation in the
// reply), an order looked up in its table, and a hand-over to a person (who answers and gives it back).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deployFolder, logsSince, replies, sendAndWait, startChat } from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot } from './helpers/deployed-bots.ts';
import { completionsAbout } from './helpers/model-bots.ts';
import { parleyAdmin } from './helpers/parley-client.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer, ReceivedRequest } from './helpers/model-server.ts';
import { runParley } from './helpers/process.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const EXAMPLE = 'examples/knowledge-agent';

interface SentMessage {
  role: string;
  content?: string | null;
}
const messagesOf = (request: ReceivedRequest | undefined) =>
  (request?.body as { messages: SentMessage[] } | undefined)?.messages ?? [];

for (const store of await testStores()) {
  describe(`examples/knowledge-agent (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let t: TestServer;
    let bot: DeployedBot;
    before(async () => {
      models = await startModelServer();
      t = await startTestServer(store, parleySettings(models));
      bot = await deployFolder(t, EXAMPLE);
      const imported = runParley(
        ['tables', 'import', 'OrdersTable', `${EXAMPLE}/seed/orders.csv`, '--bot-id', bot.botId],
        { PARLEY_URL: t.url, PARLEY_TOKEN: t.token, PARLEY_WORKSPACE_ID: t.workspaceId },
      );
      assert.equal(await imported.exited, 0, imported.output());
    });
    after(async () => {
      await t?.close();
      await models?.close();
    });

    const callsAbout = (text: string) => completionsAbout(models, text);

    async function ask(chatter: Chatter, text: string): Promise<string | undefined> {
      const event = await sendAndWait(bot, chatter, text);
      assert.equal(event.status, 'processed', JSON.stringify(event.failureReason));
      return (await replies(bot, chatter)).at(-1);
    }

    test('answers from its documents: the passage and its link go to the model, the citation to the visitor', async () => {
      const since = new Date().toISOString();
      const chatter = await startChat(bot);
      const answer =
        'Keep the packaging and write to us with a photo within 7 days: we send a replacement at once (see returns.md).';
      models.reply({ toolCalls: [{ name: 'search_help', arguments: { query: 'damaged item' } }] }, answer);
      assert.equal(await ask(chatter, 'Can I return a bike that arrived damaged?'), answer);

      const [first, second] = callsAbout('Can I return a bike that arrived damaged?');
      assert.match(messagesOf(first)[0]?.content ?? '', /^You are the support agent of an online shop/);
      const result = messagesOf(second).at(-1);
      assert.equal(result?.role, 'tool');
      const { passages } = JSON.parse(result?.content ?? '{}') as {
        passages: { text: string; source: string; link?: string }[];
      };
      const damaged = passages.find((p) => p.text.includes('arrives damaged'));
      assert.ok(damaged, `the passage about damaged items: ${JSON.stringify(passages)}`);
      assert.equal(damaged.source, 'returns.md');
      const page = await fetch(damaged.link ?? 'http://invalid.');
      assert.match(await page.text(), /keep the packaging and write to us with a photo within 7 days/);

      const lines = await waitFor(
        'the model and tool calls in the logs',
        async () => {
          const found = (await logsSince(t, bot.botId, since)).map((l) => l.message);
          return found.some((m) => m.includes('tool search_help')) && found;
        },
        5000,
      );
      assert.ok(lines.some((m) => /^autonomous node "agent": model call 1 to /.test(m)));
    });

    test('looks an order up in its table, and hands over to a person', async () => {
      const chatter = await startChat(bot);
      models.reply(
        { toolCalls: [{ name: 'lookupOrder', arguments: { orderId: '1002' } }] },
        'Order 1002 is still being prepared.',
      );
      assert.equal(await ask(chatter, 'where is my order 1002?'), 'Order 1002 is still being prepared.');
      const result = messagesOf(callsAbout('where is my order 1002?')[1]).at(-1);
      assert.deepEqual(JSON.parse(result?.content ?? '{}'), {
        found: true,
        orderId: '1002',
        status: 'processing',
        since: '2025-05-14T16:05:00.000Z',
      });

      models.reply({ toolCalls: [{ name: 'hand_over', arguments: {} }] });
      assert.equal(
        await ask(chatter, 'I would like to talk to someone'),
        'I am handing you over to a person of the team: they will answer here.',
      );

      // A person of the team finds it in the queue, answers, and gives the conversation back.
      const desk = parleyAdmin(t);
      const handoff = await waitFor('the handoff in the queue', async () => {
        const { handoffs } = await desk.listHandoffs({ id: bot.botId, status: 'pending' });
        return handoffs.find((h) => h.conversationId === chatter.runtimeConversationId);
      });
      assert.equal(handoff.team, 'support');
      assert.match(handoff.reason, /I would like to talk to someone/);
      await desk.assignHandoff({ id: bot.botId, handoffId: handoff.id });
      await desk.createHandoffMessage({
        id: bot.botId,
        handoffId: handoff.id,
        payload: { type: 'text', text: 'Hello, Ada from the team here.' },
      });
      await waitFor('the agent’s message to reach the visitor', async () => {
        const { messages } = await chatter.chat.listMessages({ conversationId: chatter.conversationId });
        return messages.some(
          (m) => m.payload.type === 'text' && m.payload.text === 'Hello, Ada from the team here.',
        );
      });
      await desk.resolveHandoff({ id: bot.botId, handoffId: handoff.id });
      await waitFor('the bot to be back', async () =>
        (await replies(bot, chatter)).includes('I am back: ask me anything else about your order.'),
      );
    });
  });
}
