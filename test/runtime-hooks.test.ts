// Hooks, triggers and capture cards of deployed bots, seen from a chat user and from the bot's logs:
// before_incoming_message stops or rewrites a message, before_outgoing_message drops or changes a reply,
// the after_* hooks run when they should, custom events go through the incoming-event hooks, and capture
// cards validate the answers and retry.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  deployPackage,
  json,
  logsSince,
  messagesOf,
  replies,
  sendAndWait,
  startChat,
  stateOf,
  waitForTurn,
} from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot, Files, RuntimeEvent } from './helpers/deployed-bots.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

function hooksBot(): Files {
  return {
    'bot.json': json({ formatVersion: 1, name: 'hooks-bot', events: { ping: {} } }),
    'hooks/before_incoming_message/01-filter.ts':
      "console.info('HOOK before_incoming_message ' + event.preview);\n" +
      "if (event.preview === 'stop me') return { stop: true };\n" +
      "if (event.preview === 'rewrite me') return { payload: { type: 'text', text: 'rewritten' } };\n",
    'hooks/before_incoming_message/02-second.ts':
      "console.info('HOOK before_incoming_message#2 ' + event.payload.text + ' preview=' + event.preview);\n",
    'hooks/after_incoming_message/log.ts':
      "console.info('HOOK after_incoming_message ' + event.payload.text + ' preview=' + event.preview);\n",
    'hooks/before_outgoing_message/01-edit.ts':
      "console.info('HOOK before_outgoing_message ' + message.text);\n" +
      "if (message.text === 'drop me') return { stop: true };\n" +
      "if (message.text === 'change me') return { message: { ...message, text: 'changed' } };\n",
    'hooks/before_outgoing_message/02-second.ts':
      "console.info('HOOK before_outgoing_message#2 ' + message.text);\n",
    'hooks/after_outgoing_message/log.ts':
      "console.info('HOOK after_outgoing_message ' + message.id + ' ' + message.payload.text);\n",
    // A chat user's custom event carries what they sent under `payload`, beside who and where.
    'hooks/before_incoming_event/log.ts':
      "const data = event.type === 'chat:custom' ? event.payload.payload : event.payload;\n" +
      "console.info('HOOK before_incoming_event ' + event.type + ' ' + JSON.stringify(data));\n" +
      'if (data.stop === true) return { stop: true };\n',
    'hooks/after_incoming_event/log.ts':
      "const data = event.type === 'chat:custom' ? event.payload.payload : event.payload;\n" +
      "console.info('HOOK after_incoming_event ' + event.type + ' ' + JSON.stringify(data));\n",
    'hooks/after_turn_end/log.ts':
      "console.info('HOOK after_turn_end ' + event.type + ' ' + event.preview);\n",
    'hooks/after_conversation_end/log.ts':
      "console.info('HOOK after_conversation_end ' + event.preview);\n" +
      "await client.setState({ type: 'conversation', id: event.conversationId, name: 'ended', payload: { by: event.preview } });\n",
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [
            ...['drop', 'change', 'bye', 'end card', 'age', 'email', 'pick', 'name'].map((text) => ({
              when: `event.payload.text === '${text}'`,
              to: text.replace(' ', '-'),
            })),
            { to: 'echo' },
          ],
        },
        { id: 'echo', type: 'standard', cards: [say('You said: {{ event.payload.text }}')] },
        { id: 'drop', type: 'standard', cards: [say('drop me'), say('kept')] },
        { id: 'change', type: 'standard', cards: [say('change me')] },
        { id: 'bye', type: 'end', cards: [say('goodbye')] },
        { id: 'end-card', type: 'standard', cards: [say('ending'), { type: 'end' }, say('never')] },
        {
          id: 'age',
          type: 'standard',
          cards: [
            {
              type: 'capture',
              variable: 'workflow.age',
              kind: 'number',
              prompt: 'How old are you?',
              validation: 'input >= 0 && input <= 150',
              retries: 1,
              retryMessage: 'Not a valid age: {{ event.preview }}',
              onFailure: 'gave-up',
            },
          ],
          next: 'age-done',
        },
        { id: 'age-done', type: 'standard', cards: [say('Age: {{ workflow.age }}')] },
        { id: 'gave-up', type: 'standard', cards: [say('Giving up')] },
        {
          id: 'email',
          type: 'standard',
          cards: [
            {
              type: 'capture',
              variable: 'user.email',
              kind: 'email',
              prompt: 'Your email?',
              validation: "input.endsWith('.org')",
              retries: 2,
              retryMessage: 'Not a valid email',
            },
            say('Email: {{ user.email }}'),
          ],
        },
        {
          id: 'pick',
          type: 'standard',
          cards: [
            {
              type: 'capture',
              variable: 'workflow.color',
              kind: 'choice',
              prompt: 'Pick a color',
              choices: [
                { label: 'Red', value: 'red' },
                { label: 'Blue', value: 'blue' },
              ],
              retries: 0,
              onFailure: 'no-pick',
            },
            say('Picked {{ workflow.color }}'),
          ],
        },
        { id: 'no-pick', type: 'standard', cards: [say('No color')] },
        {
          id: 'name',
          type: 'standard',
          cards: [
            { type: 'capture', variable: 'conversation.name', kind: 'text', prompt: 'Your name?' },
            say('Hi {{ conversation.name }}'),
          ],
        },
      ],
    }),
    'workflows/pinged.json': json({
      nodes: [
        { id: 'in', type: 'entry' },
        { id: 'onPing', type: 'trigger', trigger: { kind: 'custom_event', event: 'ping' }, next: 'answer' },
        { id: 'answer', type: 'standard', cards: [say('pinged {{ event.payload.n }}')] },
      ],
    }),
  };
}

const triggersBot = (): Files => ({
  'bot.json': json({ formatVersion: 1, name: 'triggers-bot' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'main-reply' },
      { id: 'main-reply', type: 'standard', cards: [say('main {{ event.preview }}')] },
      { id: 'onStart', type: 'trigger', trigger: { kind: 'conversation_started' }, next: 'welcome' },
      { id: 'welcome', type: 'standard', cards: [say('welcome {{ event.preview }}')] },
    ],
  }),
  'workflows/received.json': json({
    nodes: [
      { id: 'in', type: 'entry' },
      { id: 'onMessage', type: 'trigger', trigger: { kind: 'message_received' }, next: 'got' },
      { id: 'got', type: 'standard', cards: [say('got {{ event.preview }}')] },
    ],
  }),
});

for (const store of await testStores()) {
  describe(`hooks, triggers and captures (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, hooksBot());
    });
    after(() => t?.close());

    /** The HOOK lines the bot's code logged in this conversation since `since`, in order. */
    async function hookLines(c: Chatter, since: string): Promise<string[]> {
      return (await logsSince(t, bot.botId, since))
        .filter((l) => l.conversationId === c.runtimeConversationId && l.message.startsWith('HOOK '))
        .map((l) => l.message.slice('HOOK '.length));
    }

    /** Sends a message, waits for its turn, and answers the turn and the replies it added. */
    async function turn(c: Chatter, text: string): Promise<{ event: RuntimeEvent; added: string[] }> {
      const before = (await replies(bot, c)).length;
      const event = await sendAndWait(bot, c, text);
      return { event, added: (await replies(bot, c)).slice(before) };
    }

    test('before_incoming_message stops a message: no reply, event ignored, after_turn_end still runs', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { event, added } = await turn(c, 'stop me');
      assert.equal(event.status, 'ignored', `status (${event.failureReason})`);
      assert.deepEqual(added, [], 'no reply');
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('before_incoming_message stop me'), JSON.stringify(lines));
      assert.ok(
        !lines.some((l) => l.startsWith('after_incoming_message')),
        `after_incoming_message does not run for a stopped message: ${JSON.stringify(lines)}`,
      );
      assert.ok(lines.includes('after_turn_end message_created stop me'), JSON.stringify(lines));
      // The conversation goes on.
      const next = await turn(c, 'hello');
      assert.deepEqual(next.added, ['You said: hello']);
    });

    test('a message stopped by one before_incoming_message hook does not reach the hooks after it', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      await turn(c, 'stop me');
      const lines = await hookLines(c, since);
      assert.ok(
        !lines.some((l) => l.startsWith('before_incoming_message#2')),
        `02-second.ts ran after 01-filter.ts stopped the message: ${JSON.stringify(lines)}`,
      );
    });

    test('before_incoming_message rewrites a message: the workflow and the after hooks see the new text', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { event, added } = await turn(c, 'rewrite me');
      assert.equal(event.status, 'processed', event.failureReason ?? '');
      assert.deepEqual(added, ['You said: rewritten']);
      const lines = await hookLines(c, since);
      assert.ok(
        lines.some((l) => l.startsWith('after_incoming_message rewritten')),
        `after_incoming_message sees the new payload: ${JSON.stringify(lines)}`,
      );
    });

    test('after a rewrite, event.preview is the new text', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      await turn(c, 'rewrite me');
      const lines = await hookLines(c, since);
      const line = lines.find((l) => l.startsWith('after_incoming_message'));
      assert.equal(line, 'after_incoming_message rewritten preview=rewritten', JSON.stringify(lines));
    });

    test('a later before_incoming_message hook sees the message an earlier one rewrote', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      await turn(c, 'rewrite me');
      const lines = await hookLines(c, since);
      const line = lines.find((l) => l.startsWith('before_incoming_message#2'));
      assert.ok(line?.startsWith('before_incoming_message#2 rewritten'), `02-second.ts saw: ${line}`);
    });

    test('before_outgoing_message drops a reply: it is never sent, and later hooks do not see it', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { event, added } = await turn(c, 'drop');
      assert.equal(event.status, 'processed', event.failureReason ?? '');
      assert.deepEqual(added, ['kept'], 'only the other reply');
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('before_outgoing_message drop me'), JSON.stringify(lines));
      assert.ok(!lines.includes('before_outgoing_message#2 drop me'), JSON.stringify(lines));
      const outgoing = lines.filter((l) => l.startsWith('after_outgoing_message'));
      assert.equal(
        outgoing.length,
        1,
        `after_outgoing_message ran for the sent reply only: ${JSON.stringify(lines)}`,
      );
      assert.match(outgoing[0] as string, / kept$/);
    });

    test('before_outgoing_message changes a reply: the new one is sent and later hooks see it', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { added } = await turn(c, 'change');
      assert.deepEqual(added, ['changed']);
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('before_outgoing_message#2 changed'), JSON.stringify(lines));
    });

    test('after_outgoing_message runs once per reply sent, with the message as stored', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      await turn(c, 'hi there');
      const sent = (await messagesOf(bot, c)).filter((m) => m.userId === bot.botId);
      assert.equal(sent.length, 1);
      const lines = await hookLines(c, since);
      const outgoing = lines.filter((l) => l.startsWith('after_outgoing_message'));
      assert.deepEqual(outgoing, [`after_outgoing_message ${sent[0]?.id} You said: hi there`]);
    });

    test('the hooks of a message turn run in order, after_turn_end last', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      await turn(c, 'order');
      const lines = await hookLines(c, since);
      assert.deepEqual(lines, [
        'before_incoming_message order',
        'before_incoming_message#2 order preview=order',
        'after_incoming_message order preview=order',
        'before_outgoing_message You said: order',
        'before_outgoing_message#2 You said: order',
        lines.find((l) => l.startsWith('after_outgoing_message')) ?? 'after_outgoing_message (missing)',
        'after_turn_end message_created order',
      ]);
    });

    test('after_conversation_end runs at an end node; the next message starts over', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { added } = await turn(c, 'bye');
      assert.deepEqual(added, ['goodbye']);
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('after_conversation_end bye'), JSON.stringify(lines));
      assert.ok(
        lines.indexOf('after_conversation_end bye') < lines.indexOf('after_turn_end message_created bye'),
      );
      assert.deepEqual(await stateOf(bot, 'ended', 'conversation', c.runtimeConversationId), { by: 'bye' });
      assert.deepEqual((await turn(c, 'again')).added, ['You said: again']);
    });

    test('after_conversation_end runs at an end card; the cards after it do not run', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { added } = await turn(c, 'end card');
      assert.deepEqual(added, ['ending']);
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('after_conversation_end end card'), JSON.stringify(lines));
      assert.deepEqual(await stateOf(bot, 'ended', 'conversation', c.runtimeConversationId), {
        by: 'end card',
      });
    });

    test('after_conversation_end does not run for a turn that does not end the conversation', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      await turn(c, 'just talking');
      const lines = await hookLines(c, since);
      assert.ok(!lines.some((l) => l.startsWith('after_conversation_end')), JSON.stringify(lines));
    });

    test('a chat createEvent goes through before/after_incoming_event (not the message hooks)', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { event } = await c.chat.createEvent({
        conversationId: c.conversationId,
        payload: { kind: 'hello' },
      });
      const done = await waitForTurn(bot, c, { eventId: event.id });
      assert.notEqual(done.status, 'failed', done.failureReason ?? '');
      const lines = await hookLines(c, since);
      assert.deepEqual(lines, [
        'before_incoming_event chat:custom {"kind":"hello"}',
        'after_incoming_event chat:custom {"kind":"hello"}',
        // The preview of an event is its whole payload: who sent it, where, and what.
        `after_turn_end chat:custom ${JSON.stringify({
          userId: done.userId,
          conversationId: done.conversationId,
          payload: { kind: 'hello' },
        })}`,
      ]);
    });

    test('before_incoming_event may stop an event: after_incoming_event does not run', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { event } = await c.chat.createEvent({
        conversationId: c.conversationId,
        payload: { stop: true },
      });
      const done = await waitForTurn(bot, c, { eventId: event.id });
      assert.equal(done.status, 'ignored');
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('before_incoming_event chat:custom {"stop":true}'), JSON.stringify(lines));
      assert.ok(!lines.some((l) => l.startsWith('after_incoming_event')), JSON.stringify(lines));
    });

    test('a custom event with a custom_event trigger starts its workflow, through the event hooks', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const { event } = await bot.client.createEvent({
        type: 'ping',
        payload: { n: 7 },
        conversationId: c.runtimeConversationId,
        userId: c.runtimeUserId,
      });
      const done = await waitForTurn(bot, c, { eventId: event.id });
      assert.equal(done.status, 'processed', done.failureReason ?? '');
      assert.deepEqual(await replies(bot, c), ['pinged 7']);
      const lines = await hookLines(c, since);
      assert.ok(lines.includes('before_incoming_event ping {"n":7}'), JSON.stringify(lines));
      assert.ok(lines.includes('after_incoming_event ping {"n":7}'), JSON.stringify(lines));
      assert.ok(lines.includes('before_outgoing_message pinged 7'), JSON.stringify(lines));
    });

    test('capture number: validation with `input`, a retry message, then the value', async () => {
      const c = await startChat(bot);
      assert.deepEqual((await turn(c, 'age')).added, ['How old are you?']);
      assert.deepEqual((await turn(c, 'abc')).added, ['Not a valid age: abc'], 'not a number');
      assert.deepEqual((await turn(c, '42')).added, ['Age: 42']);
    });

    test('capture number: retries run out, and the dialog goes to onFailure', async () => {
      const c = await startChat(bot);
      await turn(c, 'age');
      assert.deepEqual(
        (await turn(c, '200')).added,
        ['Not a valid age: 200'],
        'a number the validation refuses',
      );
      assert.deepEqual((await turn(c, '-3')).added, ['Giving up'], 'one retry only');
      // Over: the next message starts from the beginning.
      assert.deepEqual((await turn(c, 'later')).added, ['You said: later']);
    });

    test('capture email: the address is checked, then validated, retried, and stored in lower case', async () => {
      const c = await startChat(bot);
      assert.deepEqual((await turn(c, 'email')).added, ['Your email?']);
      assert.deepEqual((await turn(c, 'not an email')).added, ['Not a valid email']);
      assert.deepEqual((await turn(c, 'ada@example.com')).added, ['Not a valid email'], 'not .org');
      assert.deepEqual((await turn(c, 'Ada@Example.org')).added, ['Email: ada@example.org']);
      assert.equal((await stateOf(bot, 'variables', 'user', c.runtimeUserId))?.email, 'ada@example.org');
    });

    test('capture email: without onFailure, running out of retries goes on with the next card', async () => {
      const c = await startChat(bot);
      await turn(c, 'email');
      await turn(c, 'x');
      await turn(c, 'y');
      const { added } = await turn(c, 'z');
      assert.equal(added.length, 1, JSON.stringify(added));
      assert.match(added[0] as string, /^Email: /);
    });

    test('capture choice: offers the choices, matches a label or value', async () => {
      const c = await startChat(bot);
      const { added } = await turn(c, 'pick');
      assert.equal(added[0], 'Pick a color');
      const prompt = (await messagesOf(bot, c)).filter((m) => m.userId === bot.botId).at(-1);
      assert.equal(prompt?.type, 'choice');
      assert.deepEqual(prompt?.payload.options, [
        { label: 'Red', value: 'red' },
        { label: 'Blue', value: 'blue' },
      ]);
      assert.deepEqual((await turn(c, 'blue')).added, ['Picked blue']);
      await turn(c, 'pick');
      assert.deepEqual((await turn(c, 'RED')).added, ['Picked red']);
      await turn(c, 'pick');
      assert.deepEqual((await turn(c, 'green')).added, ['No color'], 'no retries: onFailure');
    });

    test('capture text: the next message is stored', async () => {
      const c = await startChat(bot);
      assert.deepEqual((await turn(c, 'name')).added, ['Your name?']);
      assert.deepEqual((await turn(c, 'Grace Hopper')).added, ['Hi Grace Hopper']);
    });
  });

  describe(`triggers (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, triggersBot());
    });
    after(() => t?.close());

    test('conversation_started answers the first message; message_received every later one', async () => {
      const c = await startChat(bot);
      const first = await sendAndWait(bot, c, 'one');
      assert.equal(first.status, 'processed', first.failureReason ?? '');
      await sendAndWait(bot, c, 'two');
      await sendAndWait(bot, c, 'three');
      assert.deepEqual(await replies(bot, c), ['welcome one', 'got two', 'got three']);
      // Each conversation starts once.
      const other = await startChat(bot);
      await sendAndWait(bot, other, 'hey');
      assert.deepEqual(await replies(bot, other), ['welcome hey']);
    });
  });
}
