// Parley's own bots call models from their code: `client.generateText` and `client.listModels` (the
// Cognitive API, one contract with the HTTP routes) and `actions.llm.generateContent` (the built-in llm
// integration), answered by the test's model server through the gateway.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { json, sendAndWait, startChat } from './helpers/deployed-bots.ts';
import type { Files } from './helpers/deployed-bots.ts';
import { modelBotSuite } from './helpers/model-bots.ts';
import { rawRuntime } from './helpers/runtime.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

const free = { input: { type: 'object' }, output: { type: 'object' } };

/** docs/llm.md's bot code, run as it is. */
async function documentedAction(): Promise<string> {
  return docsBlock('docs/llm.md', 'bot code: actions/answer.ts');
}

/**
 * A bot that answers each message with docs/llm.md's `answer` action (the Cognitive API from bot code)
 * and then with `actions.llm.generateContent` (the built-in integration).
 */
async function modelBot(): Promise<Files> {
  return {
    'bot.json': json({ formatVersion: 1, name: 'model-bot' }),
    'actions/answer.json': json(free),
    'actions/answer.ts': await documentedAction(),
    'actions/viaIntegration.json': json(free),
    'actions/viaIntegration.ts': [
      'const messages = [{ role: "user", content: input.question }];',
      "const content = await actions.llm.generateContent({ model: { id: 'test-best' }, messages });",
      'return { text: content.choices[0].content, model: content.model };',
      '',
    ].join('\n'),
    'workflows/main.json': json({
      nodes: [
        { id: 'start', type: 'start', next: [{ to: 'answer' }] },
        {
          id: 'answer',
          type: 'standard',
          cards: [
            {
              type: 'action',
              action: 'answer',
              input: { question: '{{ event.preview }}' },
              output: 'workflow.a',
            },
            {
              type: 'say',
              message: {
                type: 'text',
                text: '{{ workflow.a.text }} ({{ workflow.a.model }} of {{ workflow.a.choices }})',
              },
            },
            {
              type: 'action',
              action: 'viaIntegration',
              input: { question: '{{ event.preview }}' },
              output: 'workflow.b',
            },
            {
              type: 'say',
              message: { type: 'text', text: '{{ workflow.b.text }} ({{ workflow.b.model }})' },
            },
          ],
        },
      ],
    }),
  };
}

for (const store of await testStores()) {
  describe(`bot code calls models (${store.name})`, { skip: store.skip }, () => {
    const suite = modelBotSuite(store, modelBot);

    test('client.generateText, client.listModels and actions.llm.generateContent answer a code card', async () => {
      const { t, bot, models } = suite;
      const chatter = await startChat(bot);
      const event = await sendAndWait(bot, chatter, 'what time is it');
      assert.equal(event.status, 'processed', JSON.stringify(event.failureReason));
      const { messages } = await bot.client.listMessages({ conversationId: chatter.runtimeConversationId });
      const replies = messages
        .filter((m) => m.direction === 'outgoing')
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
        .map((m): unknown => m.payload.text);
      const listed = await rawRuntime(t, bot, 'GET', '/v2/cognitive/models');
      const { models: served } = listed.body as { models: unknown[] };
      assert.deepEqual(replies, [
        `echo: what time is it (default:test-fast of ${served.length})`,
        'echo: what time is it (default:test-best)',
      ]);
      // Both calls reached the provider, as the bot.
      assert.equal(models.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 2);
    });
  });
}
