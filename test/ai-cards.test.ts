// The AI cards of Parley's own bots: `aiGenerate` (text from instructions into a variable or to the user)
// and `aiTask` (an object matching a JSON Schema, asked again once with the error, then `onFailure`),
// through the gateway to the tests' model server, driven over the Chat API on both stores.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { json, logsSince } from './helpers/deployed-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import type { Files } from './helpers/deployed-bots.ts';
import { completionsAbout, firstExchange, modelBotSuite } from './helpers/model-bots.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

/** docs/llm.md's nodes (an aiTask card and its onFailure), as the page shows them. */
async function nodesOfTheDocs(): Promise<unknown[]> {
  return JSON.parse(await docsBlock('docs/llm.md', 'ai cards: nodes')) as unknown[];
}

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

function aiBot(documentedNodes: unknown[]): Files {
  return {
    'bot.json': json({
      formatVersion: 1,
      name: 'ai-bot',
      configuration: { variables: { persona: { type: 'string', default: 'a cheerful shop assistant' } } },
    }),
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [
            { when: "event.preview.startsWith('order')", to: 'order' },
            { when: "event.preview.startsWith('store')", to: 'store' },
            { when: "event.preview.startsWith('route')", to: 'route' },
            { to: 'write' },
          ],
        },
        {
          id: 'write',
          type: 'standard',
          cards: [
            {
              type: 'aiGenerate',
              instructions: 'You are {{ env.persona }}. Answer in one line.',
              model: 'fast',
            },
          ],
        },
        {
          id: 'store',
          type: 'standard',
          cards: [
            {
              type: 'aiGenerate',
              instructions: 'Summarize.',
              context: 'The visitor said: {{ event.preview }}',
              variable: 'workflow.summary',
              maxTokens: 50,
            },
            { type: 'say', message: { type: 'text', text: 'Stored: {{ workflow.summary }}' } },
          ],
        },
        {
          id: 'route',
          type: 'standard',
          cards: [
            {
              type: 'aiTransition',
              transitions: [
                { label: 'refund', description: 'wants money back', to: 'refund' },
                { label: 'shipping', description: 'asks where a parcel is', to: 'shipping' },
              ],
              onNone: 'unsure',
              variable: 'workflow.intent',
            },
          ],
        },
        { id: 'refund', type: 'standard', cards: [say('Refunds ({{ workflow.intent }})')] },
        { id: 'shipping', type: 'standard', cards: [say('Shipping')] },
        { id: 'unsure', type: 'standard', cards: [say('Not sure ({{ workflow.intent }})')] },
        ...documentedNodes,
      ],
    }),
  };
}

for (const store of await testStores()) {
  describe(`AI cards (${store.name})`, { skip: store.skip }, () => {
    const suite = modelBotSuite(store, async () => aiBot(await nodesOfTheDocs()));

    /** A new conversation's first message, and the bot's last reply to it. */
    const ask = async (text: string) => ({ reply: (await firstExchange(suite.bot, text)).replies.at(-1) });
    const callsAbout = (text: string) => completionsAbout(suite.models, text);

    test('aiGenerate: the instructions (templates rendered) and the user’s message go to the card’s model; the text is the reply', async () => {
      const since = new Date().toISOString();
      const { reply } = await ask('write a greeting');
      assert.equal(reply, 'echo: write a greeting');
      const [call] = callsAbout('write a greeting');
      assert.deepEqual(call?.body, {
        model: 'test-fast',
        messages: [
          { role: 'system', content: 'You are a cheerful shop assistant. Answer in one line.' },
          { role: 'user', content: 'write a greeting' },
        ],
        stream: false,
      });
      // The call, as the bot's logs (and the console's transcript) show it.
      const lines = await waitFor(
        'the model call in the logs',
        async () => {
          const found = await logsSince(suite.t, suite.bot.botId, since);
          return found.find((l) => l.message.startsWith('aiGenerate card')) ?? false;
        },
        5000,
      );
      assert.match(
        lines.message,
        /^aiGenerate card in node "write": model call to default:test-fast: \d+ input \+ \d+ output tokens, \d+ ms$/,
      );
    });

    test('aiGenerate into a variable: nothing said until a card says it; the context is the card’s', async () => {
      const { reply } = await ask('store the blue one');
      assert.equal(reply, 'Stored: echo: The visitor said: store the blue one');
    });

    test('aiTask: the object the model extracts, checked against the schema, is the variable', async () => {
      suite.models.replyWhen('order number 42', { json: { orderId: 42 } });
      const { reply } = await ask('order number 42 please');
      assert.equal(reply, 'Order 42');
      const [call] = callsAbout('order number 42');
      const body = call?.body as { response_format?: unknown; messages: { content: string }[] };
      assert.deepEqual(body.response_format, { type: 'json_object' });
      assert.match(body.messages[0]?.content ?? '', /matches this JSON Schema.*"orderId"/s);
    });

    test('aiTask: an answer that does not match is asked again once, with the error', async () => {
      suite.models.reply('not json at all', { json: { orderId: 7 } });
      const { reply } = await ask('order seven');
      assert.equal(reply, 'Order 7');
      const retry = callsAbout('order seven')[1]?.body as { messages: { role: string; content: string }[] };
      assert.deepEqual(
        retry.messages.slice(1).map((m) => [m.role, m.content.slice(0, 40)]),
        [
          ['user', 'order seven'],
          ['assistant', 'not json at all'],
          ['user', 'That answer does not match the schema: t'],
        ],
      );
    });

    test('aiTransition: the label the model chooses, among the descriptions it was given, is the node gone to', async () => {
      suite.models.replyWhen('route I want my money', { json: { label: 'refund' } });
      assert.equal((await ask('route I want my money')).reply, 'Refunds (refund)');
      const body = callsAbout('route I want my money')[0]?.body as { messages: { content: string }[] };
      assert.match(
        body.messages[0]?.content ?? '',
        /- refund: wants money back\n- shipping: asks where a parcel is/,
      );
    });

    test('aiTransition: "none", or twice no label, goes to onNone with a null label', async () => {
      suite.models.reply('garbage', { json: { label: 'none' } });
      assert.equal((await ask('route hello there')).reply, 'Not sure ()');
      suite.models.reply({ json: { label: 'weather' } }, { json: { label: 'sports' } });
      assert.equal((await ask('route what now')).reply, 'Not sure ()');
    });

    test('aiTask: two answers that do not match take onFailure, with the reason', async () => {
      suite.models.reply({ json: { orderId: 'x' } }, { json: {} });
      const { reply } = await ask('order something');
      assert.equal(
        reply,
        "Sorry: the model's answer did not match the schema after 2 tries: / must have required property 'orderId'",
      );
    });
  });
}
