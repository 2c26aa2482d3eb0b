// The `event` object bot code receives: every field of the spec's table ("Event object"), in every
// place bot code runs: the eight hooks, an action (from an action card, from bot code's client.callAction,
// and through the Runtime API), an execute-code card, card fields with templates (say, set, action input),
// and workflows started by triggers (conversation started, custom event). Each place stores the `event` it
// sees in a bot state, which the test reads back and checks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  deployPackage,
  json,
  sendAndWait,
  startChat,
  stateOf,
  waitForTurn,
} from './helpers/deployed-bots.ts';
import type { Chatter, DeployedBot, Files, RuntimeEvent } from './helpers/deployed-bots.ts';
import { ISO_UTC_MS } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { EVENT_FIELDS } from '../src/engine/event-object.ts';

type EventObject = Record<string, unknown>;

/** The fields of the spec's table ("Event object"). */
const SPEC_FIELDS = [
  'botId',
  'conversationId',
  'createdOn',
  'direction',
  'id',
  'integration',
  'kb',
  'messageId',
  'payload',
  'preview',
  'state',
  'tags',
  'trigger',
  'type',
  'userId',
];

/** Bot code that stores the `event` it sees (and `message`, where there is one) as bot state `seen-<place>`. */
const record = (place: string, extra = '') =>
  `await client.setState({ type: 'bot', id: event.botId, name: 'seen-${place}', payload: { event${extra} } });\n`;

const HOOKS = [
  'before_incoming_message',
  'after_incoming_message',
  'before_outgoing_message',
  'after_outgoing_message',
  'before_incoming_event',
  'after_incoming_event',
  'after_turn_end',
  'after_conversation_end',
] as const;

function eventObjectBot(): Files {
  const files: Files = {
    'bot.json': json({
      formatVersion: 1,
      name: 'event-object-bot',
      events: { ping: { description: 'A custom event the host sends', schema: { type: 'object' } } },
    }),
    'actions/record.json': json({
      input: {
        type: 'object',
        properties: { place: { type: 'string' }, preview: { type: 'string' } },
        required: ['place'],
      },
      output: {
        type: 'object',
        properties: { place: { type: 'string' }, eventType: { type: 'string' } },
        required: ['place', 'eventType'],
      },
    }),
    'actions/record.ts':
      "await client.setState({ type: 'bot', id: event.botId, name: 'seen-action-' + input.place, payload: { event, input } });\n" +
      'return { place: input.place, eventType: event.type };\n',
    'workflows/main.json': json({
      nodes: [
        { id: 'start', type: 'start', next: 'work' },
        {
          id: 'work',
          type: 'standard',
          cards: [
            { type: 'code', code: record('code-card') },
            { type: 'set', variable: 'conversation.fromTemplate', value: '{{ event }}' },
            {
              type: 'code',
              code: "await client.setState({ type: 'bot', id: event.botId, name: 'seen-set-template', payload: { event: conversation.fromTemplate } });",
            },
            {
              type: 'action',
              action: 'record',
              input: { place: 'card', preview: '{{ event.preview }}' },
              output: 'workflow.recorded',
            },
            {
              type: 'code',
              code: "const r = await client.callAction({ type: 'record', input: { place: 'client' } }); workflow.viaClient = r.output;",
            },
            { type: 'say', message: { type: 'text', text: 'EVENT {{ JSON.stringify(event) }}' } },
          ],
          next: 'bye',
        },
        { id: 'bye', type: 'end' },
      ],
    }),
    'workflows/started.json': json({
      nodes: [
        { id: 'in', type: 'entry' },
        { id: 'onStart', type: 'trigger', trigger: { kind: 'conversation_started' }, next: 'hello' },
        {
          id: 'hello',
          type: 'standard',
          cards: [
            { type: 'code', code: record('conversation-started') },
            { type: 'say', message: { type: 'text', text: 'welcome' } },
          ],
        },
      ],
    }),
    'workflows/pinged.json': json({
      nodes: [
        { id: 'in', type: 'entry' },
        { id: 'onPing', type: 'trigger', trigger: { kind: 'custom_event', event: 'ping' }, next: 'handle' },
        {
          id: 'handle',
          type: 'standard',
          cards: [
            { type: 'code', code: record('custom-trigger') },
            { type: 'say', message: { type: 'text', text: 'TRIGGER {{ JSON.stringify(event.trigger) }}' } },
          ],
        },
      ],
    }),
  };
  for (const hook of HOOKS) {
    const withMessage = hook.includes('outgoing') ? ', message' : '';
    files[`hooks/${hook}/record.ts`] = record(hook, withMessage);
  }
  return files;
}

/** The spec's required fields, with their types. */
function assertRequired(ev: EventObject, botId: string, where: string): void {
  assert.equal(ev.botId, botId, `${where}: botId is the bot's id`);
  assert.equal(typeof ev.createdOn, 'string', `${where}: createdOn is a string`);
  assert.match(ev.createdOn as string, ISO_UTC_MS, `${where}: createdOn is ISO 8601`);
  assert.equal(ev.direction, 'incoming', `${where}: direction`);
  assert.equal(typeof ev.id, 'string', `${where}: id is a string`);
  assert.ok((ev.id as string).length > 0, `${where}: id is not empty`);
  assert.ok(isObject(ev.payload), `${where}: payload is an object`);
  assert.equal(typeof ev.preview, 'string', `${where}: preview is a string`);
  assert.ok(isObject(ev.state), `${where}: state is an object`);
  assert.equal(typeof ev.type, 'string', `${where}: type is a string`);
  // Optional, but when present: kb.included (required within kb) and kb.results are arrays.
  if (ev.kb !== undefined) {
    assert.ok(isObject(ev.kb), `${where}: kb is an object`);
    const kb = ev.kb;
    assert.ok(Array.isArray(kb.included), `${where}: kb.included is an array`);
    if (kb.results !== undefined) assert.ok(Array.isArray(kb.results), `${where}: kb.results is an array`);
  }
  if (ev.tags !== undefined) {
    assert.ok(isObject(ev.tags), `${where}: tags is an object`);
    const tags = ev.tags;
    for (const key of ['conversation', 'user', 'message']) {
      if (tags[key] !== undefined) assert.ok(isObject(tags[key]), `${where}: tags.${key} is an object`);
    }
  }
  const unknown = Object.keys(ev).filter((k) => !SPEC_FIELDS.includes(k));
  assert.deepEqual(unknown, [], `${where}: no field outside the spec's table`);
}

/** The fields of an event that happened in a chat conversation, as the runtime recorded it. */
function assertInConversation(ev: EventObject, runtime: RuntimeEvent, c: Chatter, where: string): void {
  assert.equal(ev.id, runtime.id, `${where}: id is the runtime event's id`);
  assert.equal(ev.type, runtime.type, `${where}: type is the runtime event's type`);
  assert.equal(ev.createdOn, runtime.createdAt, `${where}: createdOn is the runtime event's createdAt`);
  assert.equal(ev.conversationId, c.runtimeConversationId, `${where}: conversationId`);
  assert.equal(ev.userId, c.runtimeUserId, `${where}: userId`);
  assert.equal(ev.integration, 'chat', `${where}: integration is the chat channel`);
  assert.ok(isObject(ev.kb), `${where}: kb is there`);
  const kb = ev.kb;
  assert.deepEqual(kb.included, [], `${where}: kb.included (no knowledge bases)`);
  assert.deepEqual(kb.results, [], `${where}: kb.results`);
  assert.ok(isObject(ev.tags), `${where}: tags is there`);
  const tags = ev.tags as Record<string, Record<string, string>>;
  assert.equal(
    tags.conversation?.topic,
    'billing',
    `${where}: tags.conversation holds the conversation's tags`,
  );
  assert.equal(tags.user?.tier, 'gold', `${where}: tags.user holds the user's tags`);
  assert.ok(isObject(tags.message), `${where}: tags.message is an object`);
}

function assertMessageEvent(ev: EventObject, runtime: RuntimeEvent, text: string, where: string): void {
  assert.equal(ev.type, 'message_created', `${where}: type`);
  assert.equal(ev.messageId, runtime.messageId, `${where}: messageId is the message's id`);
  assert.deepEqual(ev.payload, { type: 'text', text }, `${where}: payload is the message's`);
  assert.equal(ev.preview, text, `${where}: preview is the text of a text message`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

for (const store of await testStores()) {
  describe(`the event object in bot code (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let c: Chatter;
    /** The turns of the conversation, in order: the first message, the second message, the custom event. */
    let first: RuntimeEvent;
    let second: RuntimeEvent;
    let custom: RuntimeEvent;
    /** What each place stored after each turn. */
    const seen: Record<string, Record<string, EventObject | undefined>> = {};
    const seenMessage: Record<string, Record<string, unknown>> = {};

    async function snapshot(turn: string, places: string[]): Promise<void> {
      seen[turn] = {};
      for (const place of places) {
        const payload = await stateOf(bot, `seen-${place}`);
        seen[turn][place] = payload?.event as EventObject | undefined;
        if (payload && 'message' in payload) seenMessage[`${turn}:${place}`] = payload.message as never;
      }
    }

    const seenAt = (turn: string, place: string): EventObject => {
      const ev = seen[turn]?.[place];
      assert.ok(ev, `${place} recorded an event during the ${turn} turn`);
      return ev;
    };

    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, eventObjectBot());
      c = await startChat(bot);
      await bot.client.updateConversation({ id: c.runtimeConversationId, tags: { topic: 'billing' } });
      await bot.client.updateUser({ id: c.runtimeUserId, tags: { tier: 'gold' } });

      const messagePlaces = [
        'before_incoming_message',
        'after_incoming_message',
        'before_outgoing_message',
        'after_outgoing_message',
        'after_turn_end',
        'after_conversation_end',
      ];
      first = await sendAndWait(bot, c, 'hello there');
      await snapshot('first', [...messagePlaces, 'conversation-started']);
      second = await sendAndWait(bot, c, 'second message');
      await snapshot('second', [
        ...messagePlaces,
        'code-card',
        'set-template',
        'action-card',
        'action-client',
      ]);
      // A custom event, as a host or integration sends it through the Runtime API: it starts the trigger.
      const { event } = await bot.client.createEvent({
        type: 'ping',
        payload: { kind: 'ping', n: 1 },
        conversationId: c.runtimeConversationId,
        userId: c.runtimeUserId,
      });
      custom = await waitForTurn(bot, c, { eventId: event.id });
      await snapshot('custom', [
        'before_incoming_event',
        'after_incoming_event',
        'before_outgoing_message',
        'after_turn_end',
        'custom-trigger',
      ]);
    });
    after(() => t?.close());

    test('every turn ran to its end', () => {
      assert.equal(first.status, 'processed', `first turn: ${first.failureReason}`);
      assert.equal(second.status, 'processed', `second turn: ${second.failureReason}`);
      assert.equal(custom.status, 'processed', `custom event turn: ${custom.failureReason}`);
    });

    test('incoming-message hooks see the message event with every field', () => {
      for (const [turn, runtime, text] of [
        ['first', first, 'hello there'],
        ['second', second, 'second message'],
      ] as const) {
        for (const hook of ['before_incoming_message', 'after_incoming_message', 'after_turn_end']) {
          const ev = seenAt(turn, hook);
          const where = `${hook} (${turn} turn)`;
          assertRequired(ev, bot.botId, where);
          assertInConversation(ev, runtime, c, where);
          assertMessageEvent(ev, runtime, text, where);
        }
      }
    });

    test('outgoing-message hooks see the incoming event of the turn, and the reply as `message`', () => {
      for (const hook of ['before_outgoing_message', 'after_outgoing_message']) {
        const ev = seenAt('first', hook);
        assertRequired(ev, bot.botId, hook);
        assertInConversation(ev, first, c, hook);
        assertMessageEvent(ev, first, 'hello there', hook);
      }
      const before = seenMessage['first:before_outgoing_message'];
      assert.deepEqual(
        before,
        { type: 'text', text: 'welcome' },
        'before_outgoing_message: the reply to be sent',
      );
      const sent = seenMessage['first:after_outgoing_message'];
      assert.ok(sent, 'after_outgoing_message: the message sent');
      assert.equal(typeof sent.id, 'string');
      assert.equal(sent.conversationId, c.runtimeConversationId);
      assert.deepEqual(sent.payload, { text: 'welcome' });
    });

    test('after_conversation_end sees the event of the turn that ended the conversation', () => {
      assert.equal(seen.first?.after_conversation_end, undefined, 'the first turn did not end it');
      const ev = seenAt('second', 'after_conversation_end');
      assertRequired(ev, bot.botId, 'after_conversation_end');
      assertInConversation(ev, second, c, 'after_conversation_end');
      assertMessageEvent(ev, second, 'second message', 'after_conversation_end');
    });

    test('a conversation_started trigger: the event has trigger { flowId, nodeId, conversationId, userId, integration }', () => {
      const ev = seenAt('first', 'conversation-started');
      assertRequired(ev, bot.botId, 'conversation_started workflow');
      assertInConversation(ev, first, c, 'conversation_started workflow');
      assertMessageEvent(ev, first, 'hello there', 'conversation_started workflow');
      assert.deepEqual(ev.trigger, {
        flowId: 'started',
        nodeId: 'onStart',
        conversationId: c.runtimeConversationId,
        userId: c.runtimeUserId,
        integration: 'chat',
      });
      // The hooks of that turn see the same trigger.
      assert.deepEqual(seenAt('first', 'before_incoming_message').trigger, ev.trigger);
    });

    test('an execute-code card sees the message event', () => {
      const ev = seenAt('second', 'code-card');
      assertRequired(ev, bot.botId, 'code card');
      assertInConversation(ev, second, c, 'code card');
      assertMessageEvent(ev, second, 'second message', 'code card');
    });

    test('a workflow started at main (no trigger) has no event.trigger', () => {
      // The first turn was started by the conversation_started trigger; the second by main's start node.
      const ev = seenAt('second', 'code-card');
      assert.equal(
        ev.trigger,
        undefined,
        `the second message started main, not a trigger, yet event.trigger is ${JSON.stringify(ev.trigger)}`,
      );
    });

    test('card configuration fields: a set card value of exactly {{ event }} is the event object', () => {
      const ev = seenAt('second', 'set-template');
      assertRequired(ev, bot.botId, 'set card template');
      assertInConversation(ev, second, c, 'set card template');
      assertMessageEvent(ev, second, 'second message', 'set card template');
    });

    test('card configuration fields: a say card template embedding JSON.stringify(event)', async () => {
      const texts = (await bot.client.listMessages({ conversationId: c.runtimeConversationId })).messages
        .filter((m) => m.userId === bot.botId)
        .map((m) => String(m.payload.text));
      const reply = texts.find((text) => text.startsWith('EVENT '));
      assert.ok(reply, `the say card's reply is there (replies: ${JSON.stringify(texts)})`);
      const ev = JSON.parse(reply.slice('EVENT '.length)) as EventObject;
      assertRequired(ev, bot.botId, 'say card template');
      assertInConversation(ev, second, c, 'say card template');
      assertMessageEvent(ev, second, 'second message', 'say card template');
    });

    test('an action called from an action card sees the turn event; its templated input rendered', async () => {
      const ev = seenAt('second', 'action-card');
      assertRequired(ev, bot.botId, 'action from a card');
      assertInConversation(ev, second, c, 'action from a card');
      assertMessageEvent(ev, second, 'second message', 'action from a card');
      const stored = await stateOf(bot, 'seen-action-card');
      assert.deepEqual(stored?.input, { place: 'card', preview: 'second message' });
    });

    test('an action called by bot code with client.callAction: a well-formed event object', () => {
      // client.callAction from a turn's code runs the action in that turn: it sees the turn's message event,
      // as an action card's action does.
      const ev = seenAt('second', 'action-client');
      assertRequired(ev, bot.botId, 'action from client.callAction');
      assert.equal(ev.type, 'message_created');
      assert.equal(typeof ev.conversationId, 'string');
      assert.equal(typeof ev.messageId, 'string');
      assert.equal(ev.direction, 'incoming');
    });

    test('an action called through the Runtime API: the event is the action call itself', async () => {
      const res = await bot.client.callAction({ type: 'record', input: { place: 'api' } });
      assert.deepEqual(res, {
        output: { place: 'api', eventType: 'action_triggered' },
        meta: { cached: false },
      });
      const stored = await stateOf(bot, 'seen-action-api');
      const ev = stored?.event as EventObject | undefined;
      assert.ok(ev, 'the action recorded its event');
      assertRequired(ev, bot.botId, 'action through the API');
      // Documented: no message, conversation or user: the action call is the event.
      assert.equal(ev.type, 'action_triggered');
      assert.deepEqual(ev.payload, { type: 'record', input: { place: 'api' } });
      assert.equal(ev.preview, 'record');
      for (const absent of ['conversationId', 'userId', 'messageId', 'integration', 'trigger']) {
        assert.equal(ev[absent], undefined, `no ${absent}`);
      }
      assert.deepEqual(ev.kb, { included: [], results: [] });
      assert.deepEqual(ev.tags, { conversation: {}, user: {}, message: {} });
    });

    test('a custom event: incoming-event hooks see it without a message', () => {
      for (const hook of ['before_incoming_event', 'after_incoming_event', 'after_turn_end']) {
        const ev = seenAt('custom', hook);
        assertRequired(ev, bot.botId, hook);
        assertInConversation(ev, custom, c, hook);
        assert.equal(ev.type, 'ping');
        assert.deepEqual(ev.payload, { kind: 'ping', n: 1 });
        assert.equal(ev.messageId, undefined, `${hook}: no messageId for an event that is not a message`);
        assert.deepEqual((ev.tags as Record<string, unknown>).message, {}, `${hook}: no message tags`);
      }
      assert.equal(seen.custom?.before_incoming_message, undefined);
    });

    test('a custom_event trigger: the event has trigger { flowId, nodeId, eventName, conversationId, userId, integration }', async () => {
      const ev = seenAt('custom', 'custom-trigger');
      assertRequired(ev, bot.botId, 'custom_event workflow');
      assertInConversation(ev, custom, c, 'custom_event workflow');
      assert.equal(ev.type, 'ping');
      assert.deepEqual(ev.trigger, {
        flowId: 'pinged',
        nodeId: 'onPing',
        eventName: 'ping',
        conversationId: c.runtimeConversationId,
        userId: c.runtimeUserId,
        integration: 'chat',
      });
      const outgoing = seenAt('custom', 'before_outgoing_message');
      assert.equal(outgoing.id, custom.id, 'the outgoing hook of that turn sees the custom event');
      assert.deepEqual(outgoing.trigger, ev.trigger);
    });
  });

  describe(`the event object of a chat custom event (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t?.close());

    test('a chat createEvent (chat:custom) reaches the incoming-event hooks with every field', async () => {
      const files = eventObjectBot();
      const bot = await deployPackage(t, files);
      const c = await startChat(bot);
      await bot.client.updateConversation({ id: c.runtimeConversationId, tags: { topic: 'billing' } });
      await bot.client.updateUser({ id: c.runtimeUserId, tags: { tier: 'gold' } });
      const { event } = await c.chat.createEvent({
        conversationId: c.conversationId,
        payload: { hello: 'world' },
      });
      const runtime = await waitForTurn(bot, c, { eventId: event.id });
      assert.equal(runtime.type, 'chat:custom');
      for (const hook of ['before_incoming_event', 'after_incoming_event', 'after_turn_end']) {
        const ev = (await stateOf(bot, `seen-${hook}`))?.event as EventObject | undefined;
        assert.ok(ev, `${hook} recorded the event`);
        assertRequired(ev, bot.botId, hook);
        assertInConversation(ev, runtime, c, hook);
        assert.equal(ev.type, 'chat:custom');
        assert.deepEqual(ev.payload, {
          userId: c.runtimeUserId,
          conversationId: c.runtimeConversationId,
          payload: { hello: 'world' },
        });
        assert.equal(ev.messageId, undefined);
      }
    });

    test('a custom_event trigger on chat:custom (what a chat createEvent is) starts its workflow', async () => {
      // A chat createEvent is the integration event "chat:custom": a trigger names it as is.
      const files: Files = {
        // An integration's event (alias:name) is not declared in bot.json: only the bot's own events are.
        'bot.json': json({ formatVersion: 1, name: 'chat-trigger-bot' }),
        'workflows/main.json': json({
          nodes: [
            { id: 'start', type: 'start' },
            {
              id: 'onChatEvent',
              type: 'trigger',
              trigger: { kind: 'custom_event', event: 'chat:custom' },
              next: 'handle',
            },
            { id: 'handle', type: 'standard', cards: [{ type: 'code', code: record('chat-trigger') }] },
          ],
        }),
      };
      const bot = await deployPackage(t, files);
      const c = await startChat(bot);
      const { event } = await c.chat.createEvent({ conversationId: c.conversationId, payload: { x: 1 } });
      const runtime = await waitForTurn(bot, c, { eventId: event.id });
      assert.equal(runtime.status, 'processed');
      const ev = (await stateOf(bot, 'seen-chat-trigger'))?.event as EventObject | undefined;
      assert.ok(ev, 'the triggered workflow ran');
      assert.deepEqual(ev.trigger, {
        flowId: 'main',
        nodeId: 'onChatEvent',
        eventName: 'chat:custom',
        conversationId: c.runtimeConversationId,
        userId: c.runtimeUserId,
        integration: 'chat',
      });
    });
  });
}

// The console's code editor completes `event.` with EVENT_FIELDS: every field of the table, no other.
test('the event members the code editor completes are the spec table’s', () => {
  assert.deepEqual(Object.keys(EVENT_FIELDS).sort(), SPEC_FIELDS);
});
