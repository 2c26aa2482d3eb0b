// The autonomous card of Parley's own bots: a model that holds a node, calls the tools the card lists
// (the bot's actions, knowledge search, messages, waiting for the user, other nodes) and is capped per
// turn; driven over the Chat API on both stores with the tests' model server, and through a crash of
// `parley serve` in the middle of a turn.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@botpress/client';
import { ChatSession, deployWithCli, textOf, turnOutcome } from './helpers/chat-bots.ts';
import type { ChatMessage } from './helpers/chat-bots.ts';
import {
  deployPackage,
  json,
  logsSince,
  replies,
  sendAndWait,
  startChat,
  writePackage,
} from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot, Files } from './helpers/deployed-bots.ts';
import { completionsAbout } from './helpers/model-bots.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer, ReceivedRequest } from './helpers/model-server.ts';
import { runParley } from './helpers/process.ts';
import { waitFor } from './helpers/runtime.ts';
import { ServeProcesses } from './helpers/serve-processes.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

/** A snippet of docs/llm.md's "Autonomous node", by its marker. */
const snippet = (marker: string) => docsBlock('docs/llm.md', marker);

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

/** The docs' example (its action and nodes as the page shows them), with nodes of the tests' own for the caps. */
async function agentBot(): Promise<Files> {
  const documented = JSON.parse(await snippet('autonomous node: nodes')) as unknown[];
  return {
    'bot.json': json({
      formatVersion: 1,
      name: 'agent-bot',
      configuration: { variables: { shop: { type: 'string', default: 'the Blue Shop' } } },
    }),
    'actions/lookupOrder.json': await snippet('autonomous node: lookupOrder.json'),
    'actions/lookupOrder.ts': await snippet('autonomous node: lookupOrder.ts'),
    'knowledge/faq.json': json({ files: ['docs/faq.md'] }),
    'docs/faq.md': '# Returns\n\nReturns are accepted within 30 days of delivery, in their original box.\n',
    'workflows/billing.json': json({
      nodes: [
        { id: 'entry', type: 'entry', cards: [say('Billing here.')], next: 'exit' },
        { id: 'exit', type: 'exit' },
      ],
    }),
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [
            { when: "event.preview.startsWith('tight')", to: 'tight' },
            { when: "event.preview.startsWith('budget')", to: 'budget' },
            { to: 'agent' },
          ],
        },
        ...documented,
        {
          id: 'tight',
          type: 'standard',
          cards: [
            {
              type: 'autonomous',
              instructions: 'You work for {{ env.shop }}.',
              model: 'fast',
              tools: [
                { type: 'action', action: 'lookupOrder', name: 'order_status' },
                { type: 'workflow', workflow: 'billing', description: 'Questions about invoices' },
              ],
              maxIterations: 2,
            },
          ],
          next: 'billed',
        },
        {
          id: 'budget',
          type: 'standard',
          cards: [
            {
              type: 'autonomous',
              instructions: 'Be brief.',
              tools: [{ type: 'action', action: 'lookupOrder' }],
              maxTokens: 5,
              onLimit: 'limited',
            },
          ],
        },
        { id: 'limited', type: 'standard', cards: [say('Out of budget')] },
        { id: 'billed', type: 'standard', cards: [say('Back from billing')] },
      ],
    }),
  };
}

interface SentMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}
interface SentBody {
  model: string;
  messages: SentMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
}
const bodyOf = (request: ReceivedRequest | undefined) => request?.body as SentBody;

for (const store of await testStores()) {
  describe(`autonomous node (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let t: TestServer;
    let bot: DeployedBot;
    before(async () => {
      models = await startModelServer();
      t = await startTestServer(store, parleySettings(models));
      bot = await deployPackage(t, await agentBot());
    });
    after(async () => {
      await t?.close();
      await models?.close();
    });

    /** The chat completions the model server received whose messages mention `text`. */
    const callsAbout = (text: string) => completionsAbout(models, text);

    async function turn(text: string, chatter?: Chatter): Promise<{ chatter: Chatter; replies: string[] }> {
      const c = chatter ?? (await startChat(bot));
      const event = await sendAndWait(bot, c, text);
      assert.equal(event.status, 'processed', JSON.stringify(event.failureReason));
      return { chatter: c, replies: await replies(bot, c) };
    }

    test('a tool loop: the action runs with the model’s arguments, its output goes back to the model, whose answer is the reply; each step is in the logs', async () => {
      const since = new Date().toISOString();
      models.reply(
        { toolCalls: [{ name: 'lookupOrder', arguments: { orderId: 42 } }] },
        'Your order 42 has shipped.',
      );
      const { replies: said } = await turn('where is my order 42?');
      assert.deepEqual(said, ['Your order 42 has shipped.']);

      const [first, second, third] = callsAbout('where is my order 42?');
      assert.equal(third, undefined, 'two model calls');
      const tool = bodyOf(first).tools?.find((x) => x.function.name === 'lookupOrder');
      assert.deepEqual(tool, {
        type: 'function',
        function: {
          name: 'lookupOrder',
          description: 'The status of an order, by its number',
          parameters: (JSON.parse(await snippet('autonomous node: lookupOrder.json')) as { input: unknown })
            .input,
        },
      });
      assert.deepEqual(
        bodyOf(first)
          .tools?.map((x) => x.function.name)
          .sort(),
        ['goto_handoff', 'lookupOrder', 'search_faq', 'send_message', 'wait_for_user'],
      );
      const messages = bodyOf(second).messages;
      assert.match(messages[0]?.content ?? '', /^You are the support agent of a shop/);
      const call = messages[2]?.tool_calls?.[0];
      assert.equal(call?.function.name, 'lookupOrder');
      assert.deepEqual(messages[3], {
        role: 'tool',
        tool_call_id: call?.id,
        content: JSON.stringify({ orderId: 42, status: 'shipped' }),
      });

      const logged = await waitFor(
        'the loop’s log lines',
        async () => {
          const found = await logsSince(t, bot.botId, since);
          return found.filter((l) => l.message.startsWith('autonomous node')).length >= 3 && found;
        },
        5000,
      );
      const lines = logged.map((l) => l.message);
      // Each call is also data on its line (the console's transcript folds them): two model calls, a tool call.
      const calls = logged.filter((l) => l.message.startsWith('autonomous node')).map((l) => l.call?.kind);
      assert.deepEqual(calls, ['model', 'tool', 'model']);
      // The lines have the shape the docs show.
      const documented = (await snippet('autonomous node: logs')).trim().split('\n');
      const shape = (line: string) =>
        line
          .replace(/\d+/g, '0')
          .replace(/ to \S+:/, ' to M:')
          .replace(/\{.*\}/, '{}');
      const ours = lines.filter((m) => m.startsWith('autonomous node')).map(shape);
      for (const line of documented) assert.ok(ours.includes(shape(line)), `${line} in ${ours.join('\n')}`);
      assert.ok(
        lines.some((m) =>
          /^autonomous node "agent": tool lookupOrder \{"orderId":42\} answered in \d+ ms$/.test(m),
        ),
        lines.join('\n'),
      );
    });

    test('the knowledge tool answers the passages found, with their source', async () => {
      models.reply(
        { toolCalls: [{ name: 'search_faq', arguments: { query: 'returns accepted' } }] },
        'Within 30 days.',
      );
      const { replies: said } = await turn('can I send my shoes back?');
      assert.deepEqual(said, ['Within 30 days.']);
      const result = bodyOf(callsAbout('can I send my shoes back?')[1]).messages.at(-1);
      assert.equal(result?.role, 'tool');
      const { passages } = JSON.parse(result?.content ?? '{}') as {
        passages: { text: string; source: string; link?: string }[];
      };
      assert.match(passages[0]?.text ?? '', /Returns are accepted within 30 days/);
      assert.equal(passages[0]?.source, 'faq.md');
      // The link the model may cite: the document's download URL, which serves it.
      const document = await fetch(passages[0]?.link ?? 'http://invalid.');
      assert.match(await document.text(), /Returns are accepted within 30 days/);
    });

    test('a transition tool leaves the loop for its node', async () => {
      models.reply({ toolCalls: [{ name: 'goto_handoff', arguments: {} }] });
      const { replies: said } = await turn('I want to talk to a human');
      assert.deepEqual(said, ['A person will take over from here.']);
      assert.equal(callsAbout('I want to talk to a human').length, 1);
    });

    test('wait for the user: the turn ends, and the next message goes on with the conversation so far', async () => {
      models.reply({
        toolCalls: [
          { name: 'send_message', arguments: { text: 'Which order do you mean?' } },
          { name: 'wait_for_user' },
        ],
      });
      const { chatter, replies: first } = await turn('something about an order');
      assert.deepEqual(first, ['Which order do you mean?']);

      models.reply(
        { toolCalls: [{ name: 'lookupOrder', arguments: { orderId: 8 } }] },
        'Order 8 is unknown.',
      );
      const { replies: second } = await turn('number 8', chatter);
      assert.deepEqual(second, ['Which order do you mean?', 'Order 8 is unknown.']);
      const next = bodyOf(callsAbout('number 8')[0]).messages;
      assert.deepEqual(
        next.map((m) => [m.role, m.content ?? m.tool_calls?.map((c) => c.function.name).join(',')]),
        [
          ['system', next[0]?.content],
          ['user', 'something about an order'],
          ['assistant', 'send_message,wait_for_user'],
          ['tool', '{"sent":true}'],
          ['tool', '{"waiting":true}'],
          ['user', 'number 8'],
        ],
      );
    });

    test('maxIterations: past its model calls the turn sends the limit message and waits; the next message has its calls again', async () => {
      const lookup = { toolCalls: [{ name: 'order_status', arguments: { orderId: 1 } }] };
      models.reply(lookup, lookup);
      const { chatter, replies: said } = await turn('tight loop please');
      assert.deepEqual(said, ['Sorry, I could not finish that. Could you put it another way?']);
      const calls = callsAbout('tight loop please');
      assert.equal(calls.length, 2, 'maxIterations model calls');
      assert.equal(bodyOf(calls[0]).model, 'test-fast');
      assert.match(bodyOf(calls[0]).messages[0]?.content ?? '', /^You work for the Blue Shop\.$/);
      models.reply('Done now.');
      const { replies: after } = await turn('try again', chatter);
      assert.equal(after.at(-1), 'Done now.');
    });

    test('a workflow tool runs the workflow from its entry; at its exit the node’s next is followed', async () => {
      models.reply({ toolCalls: [{ name: 'start_billing', arguments: {} }] });
      const { replies: said } = await turn('tight: my invoice is wrong');
      assert.deepEqual(said, ['Billing here.', 'Back from billing']);
      assert.equal(callsAbout('tight: my invoice is wrong').length, 1);
    });

    test('maxTokens: past the tokens of the turn no model call is made, and onLimit is taken', async () => {
      models.reply({ toolCalls: [{ name: 'lookupOrder', arguments: { orderId: 2 } }] });
      const { replies: said } = await turn('budget check');
      assert.deepEqual(said, ['Out of budget']);
      assert.equal(callsAbout('budget check').length, 1);
    });

    test('arguments that do not match the action’s input schema go back to the model as the tool’s error', async () => {
      models.reply(
        { toolCalls: [{ name: 'lookupOrder', arguments: { orderId: 'seven' } }] },
        { toolCalls: [{ name: 'lookupOrder', arguments: { orderId: 7 } }] },
        'Order 7 has shipped.',
      );
      const { replies: said } = await turn('order seven?');
      assert.deepEqual(said, ['Order 7 has shipped.']);
      const calls = callsAbout('order seven?');
      assert.equal(calls.length, 3);
      const refused = JSON.parse(bodyOf(calls[1]).messages.at(-1)?.content ?? '{}') as { error?: string };
      assert.match(refused.error ?? '', /orderId must be integer/);
      assert.equal(
        bodyOf(calls[2]).messages.at(-1)?.content,
        JSON.stringify({ orderId: 7, status: 'shipped' }),
      );
    });
  });
}

test('parley validate reports an autonomous card’s unknown action, node, workflow and knowledge base, its caps out of range, a tool name twice and a card after it, each at its line', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-autonomous-'));
  try {
    await writePackage(dir, {
      'bot.json': json({ formatVersion: 1, name: 'bad-agent' }),
      'actions/known.json': json({ input: { type: 'object' }, output: { type: 'object' } }),
      'actions/known.ts': 'return {};',
      'workflows/main.json': json({
        nodes: [
          { id: 'start', type: 'start', next: 'agent' },
          {
            id: 'agent',
            type: 'standard',
            cards: [
              {
                type: 'autonomous',
                instructions: 'Help.',
                tools: [
                  { type: 'action', action: 'missing' },
                  { type: 'node', node: 'nowhere', description: 'away' },
                  { type: 'workflow', workflow: 'billing', description: 'bills' },
                  { type: 'knowledge', knowledgeBase: 'faq' },
                  { type: 'action', action: 'known', name: 'send_message' },
                  { type: 'sendMessage' },
                ],
                onLimit: 'gone',
              },
              say('never said'),
            ],
          },
          {
            id: 'capped',
            type: 'standard',
            cards: [
              {
                type: 'autonomous',
                instructions: 'Help.',
                tools: [],
                maxIterations: 0,
                maxTokens: 2_000_000,
              },
            ],
          },
        ],
      }),
    });
    const proc = runParley(['validate', dir]);
    assert.equal(await proc.exited, 1);
    const output = proc.output();
    const page = await readFile(path.join(dir, 'workflows/main.json'), 'utf8');
    /** The line of the file where `text` first appears. */
    const lineOf = (text: string) => page.split('\n').findIndex((l) => l.includes(text)) + 1;
    const cards = '/nodes/1/cards';
    for (const [text, field, message] of [
      ['"missing"', `${cards}/0/tools/0/action`, 'no action "missing" (actions/missing.json)'],
      ['"nowhere"', `${cards}/0/tools/1/node`, 'no node "nowhere" in workflow main'],
      ['"billing"', `${cards}/0/tools/2/workflow`, 'no workflow "billing" (workflows/billing.json)'],
      [
        '"faq"',
        `${cards}/0/tools/3/knowledgeBase`,
        'no knowledge base "faq" (knowledge/faq.json), nor an id (kb_…)',
      ],
      ['"sendMessage"', `${cards}/0/tools/5`, 'two tools are named "send_message"'],
      ['"gone"', `${cards}/0/onLimit`, 'no node "gone" in workflow main'],
      [
        '"type": "say"',
        `${cards}/1`,
        'no card runs after an autonomous card: it holds the node until one of its tools goes elsewhere',
      ],
      ['"maxIterations"', '/nodes/2/cards/0/maxIterations', 'must be >= 1'],
      ['"maxTokens"', '/nodes/2/cards/0/maxTokens', 'must be <= 1000000'],
    ] as const) {
      assert.ok(output.includes(`${field}: ${message}`), `${field}: ${message} in\n${output}`);
      const line = new RegExp(`workflows/main\\.json:(\\d+):\\d+ ${field}:`).exec(output)?.[1];
      // A problem about a whole tool or card is at its opening brace, the line before its `type`.
      const expected = lineOf(text) - (/\/\d+$/.test(field) ? 1 : 0);
      assert.equal(Number(line), expected, `${field} at line ${line}`);
    }
    assert.match(output, /has 9 problems/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A bot whose agent sends a message and records a call (a table row, then 1.5 s of work) for the model. */
const crashBot: Files = {
  'bot.json': json({ formatVersion: 1, name: 'crash-agent' }),
  'tables/calls.json': json({ schema: { type: 'object', properties: { orderId: { type: 'number' } } } }),
  'actions/recordCall.json': json({
    description: 'Records a call about an order',
    input: {
      type: 'object',
      properties: { orderId: { type: 'integer' } },
      required: ['orderId'],
    },
    output: { type: 'object', properties: { recorded: { type: 'boolean' } } },
  }),
  'actions/recordCall.ts': [
    "await client.createTableRows({ table: 'calls', rows: [{ orderId: input.orderId }] });",
    'const end = Date.now() + 1500;',
    'while (Date.now() < end) {}',
    'return { recorded: true };',
  ].join('\n'),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'agent' },
      {
        id: 'agent',
        type: 'standard',
        cards: [
          {
            type: 'autonomous',
            instructions: 'Record the calls.',
            tools: [{ type: 'action', action: 'recordCall' }, { type: 'sendMessage' }],
          },
        ],
      },
    ],
  }),
};

for (const store of await testStores()) {
  describe(
    `an autonomous turn interrupted by a crash of parley serve (${store.name})`,
    { skip: store.skip },
    () => {
      const servers = new ServeProcesses(store, 'autonomous-crash');
      const { token } = servers;
      const sessions: ChatSession[] = [];
      let models: ModelServer | undefined;
      const dirs: string[] = [];
      after(async () => {
        for (const session of sessions) await session.close();
        await servers.close();
        await models?.close();
        for (const dir of dirs) await rm(dir, { recursive: true, force: true });
      });

      test('SIGKILL after a tool answered: after a restart no tool is called again and no reply is sent twice', async () => {
        models = await startModelServer();
        const env = {
          PARLEY_LLM_BASE_URL: models.url,
          PARLEY_LLM_BEST_MODEL: 'test-best',
          PARLEY_LLM_FAST_MODEL: 'test-fast',
        };
        const first = await servers.serve({ env });
        const [, workspaceId] = await first.proc.waitFor(/workspace id: (\S+)/);
        assert.ok(workspaceId);
        const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-crash-agent-'));
        dirs.push(dir);
        await writePackage(dir, crashBot);
        const { botId, webhookUrl } = await deployWithCli({ url: first.url, token, workspaceId }, dir);
        const runtime = (url: string) => new Client({ apiUrl: url, token, workspaceId, botId });
        const rows = async (url: string) => (await runtime(url).findTableRows({ table: 'calls' })).rows;

        models.reply({
          toolCalls: [
            { name: 'send_message', arguments: { text: 'Looking it up.' } },
            { name: 'recordCall', arguments: { orderId: 9 } },
          ],
        });
        const s = await ChatSession.open(webhookUrl);
        sessions.push(s);
        const messageId = await s.say('please record order 9');
        // The action is running (its row is written, 1.5 s of work follow): the model's next call hangs.
        await waitFor('the action’s row', async () => (await rows(first.url)).length === 1, 15_000);
        models.fail({ kind: 'hang' });
        const calls = () =>
          models?.requests.filter(
            (r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes('record order 9'),
          ) ?? [];
        await waitFor('the model call after the tool’s result', async () => calls().length === 2, 15_000);
        first.proc.child.kill('SIGKILL');
        await first.proc.exited;
        await s.close();

        models.reply('Order 9 is recorded.');
        const second = await servers.serve({ env });
        const chatUrl = second.url + new URL(webhookUrl).pathname;
        const again = await ChatSession.resume(chatUrl, s.userKey, s.conversationId);
        sessions.push(again);
        const botTexts = (messages: ChatMessage[]) => messages.filter((m) => m.userId === botId).map(textOf);
        await waitFor(
          'the turn’s last reply',
          async () => botTexts(await again.history()).includes('Order 9 is recorded.'),
          30_000,
        );
        assert.deepEqual(await turnOutcome(runtime(second.url), messageId), {
          status: 'processed',
          failureReason: null,
        });
        assert.deepEqual(botTexts(await again.history()), ['Looking it up.', 'Order 9 is recorded.']);
        assert.equal((await rows(second.url)).length, 1, 'the action ran once');
        const [, hung, retried, more] = calls();
        assert.equal(more, undefined);
        assert.deepEqual(
          (retried?.body as SentBody).messages,
          (hung?.body as SentBody).messages,
          'the turn tried again asks the model what the interrupted one asked, from the recorded results',
        );
      });
    },
  );
}
