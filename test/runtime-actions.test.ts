// The action call, POST /v1/chat/actions, on deployed bots: its strict body and answer, the bot's own
// actions (schemas, caching), the chat channel's chat:sendEvent, and who may call what.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as chat from '@botpress/chat';
import { ForbiddenError, InvalidPayloadError, ResourceNotFoundError, RuntimeError } from '@botpress/client';
import {
  deployPackage,
  json,
  logsSince,
  sendAndWait,
  startChat,
  waitForLog,
} from './helpers/deployed-bots.ts';
import type { DeployedBot, Files } from './helpers/deployed-bots.ts';
import { assertErrorBody, rejectsWith, unique } from './helpers/runtime.ts';
import type { RawResponse } from './helpers/runtime.ts';
import { eventually } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const RUNS = `console.info(ACTION + ' ran ' + JSON.stringify(input));\n`;

function actionsBot(): Files {
  const greetIo = {
    input: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 } },
      required: ['name'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: { greeting: { type: 'string' } },
      required: ['greeting'],
      additionalProperties: false,
    },
  };
  const free = { input: { type: 'object' }, output: { type: 'object' } };
  const ran = (name: string) => RUNS.replace('ACTION', JSON.stringify(name));
  return {
    'bot.json': json({ formatVersion: 1, name: 'actions-bot' }),
    'actions/greet.json': json(greetIo),
    'actions/greet.ts': `${ran('greet')}return { greeting: 'Hello ' + input.name };\n`,
    'actions/badOutput.json': json(greetIo),
    'actions/badOutput.ts': `${ran('badOutput')}return { greeting: 42 };\n`,
    'actions/cached.json': json({ ...free, cacheable: { ttlSeconds: 600 } }),
    'actions/cached.ts': `${ran('cached')}return { input, random: Math.random() };\n`,
    'actions/shortCache.json': json({ ...free, cacheable: { ttlSeconds: 1 } }),
    'actions/shortCache.ts': `${ran('shortCache')}return { input, random: Math.random() };\n`,
    'actions/uncached.json': json(free),
    'actions/uncached.ts': `${ran('uncached')}return { input, random: Math.random() };\n`,
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [
            { when: "event.preview === 'send-event'", to: 'sendEvent' },
            { when: "event.preview === 'bad-integration'", to: 'badIntegration' },
            { to: 'greet' },
          ],
        },
        {
          id: 'sendEvent',
          type: 'standard',
          cards: [
            {
              type: 'action',
              action: 'chat:sendEvent',
              input: {
                conversationId: '{{ event.conversationId }}',
                payload: { from: 'card', text: '{{ event.preview }}' },
              },
            },
            { type: 'say', message: { type: 'text', text: 'sent' } },
          ],
        },
        {
          id: 'badIntegration',
          type: 'standard',
          cards: [{ type: 'action', action: 'chat:nope', input: {} }],
        },
        {
          id: 'greet',
          type: 'standard',
          cards: [
            { type: 'action', action: 'greet', input: { name: '{{ event.preview }}' }, output: 'workflow.g' },
            { type: 'say', message: { type: 'text', text: '{{ workflow.g.greeting }}' } },
          ],
        },
      ],
    }),
  };
}

/** Another bot, with an action named like one of the first bot's. */
const otherBot = (): Files => ({
  'bot.json': json({ formatVersion: 1, name: 'other-bot' }),
  'actions/cached.json': json({
    input: { type: 'object' },
    output: { type: 'object' },
    cacheable: { ttlSeconds: 600 },
  }),
  'actions/cached.ts': "return { mine: 'other' };\n",
  'workflows/main.json': json({ nodes: [{ id: 'start', type: 'start' }] }),
});

/** POST /v1/chat/actions with any body and headers, as a raw HTTP call. */
async function rawAction(
  t: TestServer,
  bot: { botId: string; key: string },
  body: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<RawResponse> {
  const all: Record<string, string> = {
    authorization: `Bearer ${bot.key}`,
    'x-bot-id': bot.botId,
    'content-type': 'application/json',
  };
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) delete all[k];
    else all[k] = v;
  }
  const res = await fetch(`${t.url}/v1/chat/actions`, {
    method: 'POST',
    headers: all,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

for (const store of await testStores()) {
  describe(`the action call (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: DeployedBot;
    let other: DeployedBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await deployPackage(t, actionsBot());
      other = await deployPackage(t, otherBot());
    });
    after(() => t?.close());

    /** The log lines of `action` that ran with this marker in its input, since `since`. */
    async function runsOf(action: string, marker: string, since: string): Promise<number> {
      const logs = await logsSince(t, bot.botId, since);
      return logs.filter((l) => l.message.startsWith(`${action} ran `) && l.message.includes(marker)).length;
    }

    test('a bot action runs: 200 with exactly { output, meta: { cached } }', async () => {
      const res = await rawAction(t, bot, { type: 'greet', input: { name: 'Ada' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { output: { greeting: 'Hello Ada' }, meta: { cached: false } });
      assert.deepEqual(Object.keys(res.body as object).sort(), ['meta', 'output']);
      const viaClient = await bot.client.callAction({ type: 'greet', input: { name: 'Bob' } });
      assert.deepEqual(viaClient, { output: { greeting: 'Hello Bob' }, meta: { cached: false } });
    });

    test('x-integration-id and x-integration-alias are optional headers', async () => {
      const res = await rawAction(
        t,
        bot,
        { type: 'greet', input: { name: 'Cy' } },
        { 'x-integration-id': 'intver_123', 'x-integration-alias': 'chat' },
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { output: { greeting: 'Hello Cy' }, meta: { cached: false } });
    });

    test('x-bot-id is required', async () => {
      const res = await rawAction(
        t,
        bot,
        { type: 'greet', input: { name: 'Cy' } },
        { 'x-bot-id': undefined },
      );
      assert.ok(res.status >= 400 && res.status < 500, `a 4xx (got ${res.status})`);
      const body = res.body as Record<string, unknown>;
      assert.equal(typeof body.type, 'string');
      assert.equal(body.code, res.status);
    });

    test('the body is strict: type (≤ 200 chars) and input (object), both required, nothing else', async () => {
      const bad: [string, unknown][] = [
        ['an extra property', { type: 'greet', input: { name: 'x' }, extra: 1 }],
        ['a type of 201 characters', { type: 'a'.repeat(201), input: {} }],
        ['no input', { type: 'greet' }],
        ['no type', { input: { name: 'x' } }],
        ['an input that is an array', { type: 'greet', input: [] }],
        ['an input that is a string', { type: 'greet', input: 'x' }],
        ['an input that is null', { type: 'greet', input: null }],
        ['a type that is a number', { type: 7, input: {} }],
        ['an empty body', {}],
      ];
      for (const [what, body] of bad) {
        const res = await rawAction(t, bot, body);
        assert.equal(res.status, 400, `${what}: 400 (got ${res.status} ${JSON.stringify(res.body)})`);
        assertErrorBody(res, 400, 'InvalidPayload');
      }
      // Exactly 200 characters passes the body's checks: it is just not an action of the bot.
      const longest = await rawAction(t, bot, { type: 'a'.repeat(200), input: {} });
      assertErrorBody(longest, 404, 'ResourceNotFound');
    });

    test('the official client gets InvalidPayloadError for a bad body', async () => {
      await rejectsWith(bot.client.callAction({ type: 'a'.repeat(201), input: {} }), InvalidPayloadError);
      // (The client sends only the properties it knows: an extra one is tested with raw calls above.)
      await rejectsWith(bot.client.callAction({ type: 'greet' } as never), InvalidPayloadError);
    });

    test('an unknown action: 404 ResourceNotFound', async () => {
      await rejectsWith(bot.client.callAction({ type: 'nope', input: {} }), ResourceNotFoundError);
    });

    test('an input that breaks the action’s schema: InvalidPayload, and the action does not run', async () => {
      const since = new Date().toISOString();
      const marker = unique('bad-input');
      await rejectsWith(bot.client.callAction({ type: 'greet', input: {} }), InvalidPayloadError);
      await rejectsWith(
        bot.client.callAction({ type: 'greet', input: { name: marker, age: 3 } }),
        InvalidPayloadError,
      );
      await rejectsWith(bot.client.callAction({ type: 'greet', input: { name: 42 } }), InvalidPayloadError);
      await rejectsWith(bot.client.callAction({ type: 'greet', input: { name: '' } }), InvalidPayloadError);
      assert.equal(await runsOf('greet', marker, since), 0, 'the action never ran');
    });

    test('an output that breaks the action’s schema: 400 Runtime', async () => {
      const since = new Date().toISOString();
      const marker = unique('out');
      const err = await rejectsWith(
        bot.client.callAction({ type: 'badOutput', input: { name: marker } }),
        RuntimeError,
        /badOutput.*invalid output/,
      );
      assert.equal(err.code, 400);
      assert.equal(await runsOf('badOutput', marker, since), 1, 'it ran, and its output was refused');
    });

    test('a cacheable action: the same input again answers the stored output, cached, without running', async () => {
      const since = new Date().toISOString();
      const marker = unique('c');
      const input = { marker, a: 1, b: { c: [1, 2] } };
      const first = await bot.client.callAction({ type: 'cached', input });
      assert.equal(first.meta.cached, false);
      assert.deepEqual((first.output as { input: unknown }).input, input);
      const second = await bot.client.callAction({ type: 'cached', input });
      assert.deepEqual(second, { output: first.output, meta: { cached: true } });
      // The same input with its keys in another order is the same input.
      const reordered = await bot.client.callAction({
        type: 'cached',
        input: { b: { c: [1, 2] }, a: 1, marker },
      });
      assert.deepEqual(reordered, { output: first.output, meta: { cached: true } });
      const raw = await rawAction(t, bot, { type: 'cached', input });
      assert.deepEqual(raw.body, { output: first.output, meta: { cached: true } });
      assert.equal(await runsOf('cached', marker, since), 1, 'it ran once');

      // Another input runs.
      const changed = await bot.client.callAction({ type: 'cached', input: { ...input, a: 2 } });
      assert.equal(changed.meta.cached, false);
      assert.notDeepEqual(changed.output, first.output);
      assert.equal(await runsOf('cached', marker, since), 2);
    });

    test('a cached output belongs to its bot: another bot’s action of the same name runs its own', async () => {
      const input = { marker: unique('shared') };
      await bot.client.callAction({ type: 'cached', input });
      const theirs = await other.client.callAction({ type: 'cached', input });
      assert.deepEqual(theirs, { output: { mine: 'other' }, meta: { cached: false } });
    });

    test('a cached output expires with its TTL', async () => {
      const since = new Date().toISOString();
      const marker = unique('ttl');
      const first = await bot.client.callAction({ type: 'shortCache', input: { marker } });
      assert.equal(first.meta.cached, false);
      const again = await bot.client.callAction({ type: 'shortCache', input: { marker } });
      assert.equal(again.meta.cached, true, 'within the TTL');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const later = await bot.client.callAction({ type: 'shortCache', input: { marker } });
      assert.equal(later.meta.cached, false, 'past the TTL');
      assert.equal(await runsOf('shortCache', marker, since), 2);
    });

    test('a non-cacheable action runs every time and is never cached', async () => {
      const since = new Date().toISOString();
      const marker = unique('u');
      const first = await bot.client.callAction({ type: 'uncached', input: { marker } });
      const second = await bot.client.callAction({ type: 'uncached', input: { marker } });
      assert.equal(first.meta.cached, false);
      assert.equal(second.meta.cached, false);
      assert.notEqual(
        (first.output as { random: number }).random,
        (second.output as { random: number }).random,
      );
      assert.equal(await runsOf('uncached', marker, since), 2);
    });

    test('an action card calls the bot’s action with its templated input', async () => {
      const c = await startChat(bot);
      const turn = await sendAndWait(bot, c, 'Grace');
      assert.equal(turn.status, 'processed', turn.failureReason ?? '');
      const { messages } = await bot.client.listMessages({ conversationId: c.runtimeConversationId });
      const texts = messages.filter((m) => m.userId === bot.botId).map((m): unknown => m.payload.text);
      assert.deepEqual(texts, ['Hello Grace']);
    });

    describe('chat:sendEvent', () => {
      let user: chat.AuthenticatedClient;
      let listener: chat.SignalListener;
      let runtimeConversationId: string;
      let conversationId: string;
      const received: Record<string, unknown>[] = [];
      before(async () => {
        const c = await startChat(bot, 'listener');
        user = c.chat;
        conversationId = c.conversationId;
        runtimeConversationId = c.runtimeConversationId;
        listener = await user.listenConversation({ id: conversationId });
        listener.on('event_created', (data) => received.push(data as Record<string, unknown>));
      });
      after(async () => {
        await listener?.disconnect();
      });

      test('chat:sendEvent delivers event_created (id null, isBot true) to the conversation’s listeners', async () => {
        const res = await rawAction(t, bot, {
          type: 'chat:sendEvent',
          input: { conversationId: runtimeConversationId, payload: { hello: 'world' } },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body, { output: {}, meta: { cached: false } });
        await eventually('the event at the listener', () => received.length >= 1);
        const signal = received[0] as Record<string, unknown>;
        assert.equal(signal.id, null);
        assert.equal(signal.isBot, true);
        assert.deepEqual(signal.payload, { hello: 'world' });
        assert.equal(signal.conversationId, conversationId, 'the conversation id the chat user knows');
        assert.equal(signal.userId, bot.botId);
        assert.equal(typeof signal.createdAt, 'string');
      });

      test('chat:sendEvent from an action card reaches the listener too', async () => {
        const before = received.length;
        const id = (
          await user.createMessage({ conversationId, payload: { type: 'text', text: 'send-event' } })
        ).message.id;
        await eventually('the card’s event at the listener', () => received.length > before);
        const signal = received[before] as Record<string, unknown>;
        assert.deepEqual(signal.payload, { from: 'card', text: 'send-event' });
        assert.equal(signal.id, null);
        assert.equal(signal.isBot, true);
        assert.ok(id);
      });

      test('chat:sendEvent checks its input and the conversation', async () => {
        await rejectsWith(
          bot.client.callAction({ type: 'chat:sendEvent', input: { payload: {} } }),
          InvalidPayloadError,
        );
        await rejectsWith(
          bot.client.callAction({
            type: 'chat:sendEvent',
            input: { conversationId: runtimeConversationId, payload: 'x' },
          }),
          InvalidPayloadError,
        );
        await rejectsWith(
          bot.client.callAction({
            type: 'chat:sendEvent',
            input: { conversationId: 'conv_01JZZZZZZZZZZZZZZZZZZZZZZZ', payload: {} },
          }),
          ResourceNotFoundError,
        );
        // Another bot cannot send into this bot's conversation.
        await rejectsWith(
          other.client.callAction({
            type: 'chat:sendEvent',
            input: { conversationId: runtimeConversationId, payload: {} },
          }),
          ResourceNotFoundError,
        );
      });
    });

    test('an unknown integration action: 404 ResourceNotFound', async () => {
      await rejectsWith(bot.client.callAction({ type: 'chat:nope', input: {} }), ResourceNotFoundError);
      await rejectsWith(bot.client.callAction({ type: 'nope:sendEvent', input: {} }), ResourceNotFoundError);
    });

    test('an action card calling an unknown integration action fails its turn, logged', async () => {
      const c = await startChat(bot);
      const since = new Date().toISOString();
      const turn = await sendAndWait(bot, c, 'bad-integration');
      assert.equal(turn.status, 'failed');
      assert.match(turn.failureReason ?? '', /chat:nope/);
      await waitForLog(t, bot.botId, since, /The turn of event .* failed/, 'error');
    });

    test('bot A’s action is not callable with bot B’s key, nor as bot B', async () => {
      const withOtherKey = t.client({ token: other.key, botId: bot.botId, workspaceId: undefined });
      await rejectsWith(withOtherKey.callAction({ type: 'greet', input: { name: 'x' } }), ForbiddenError);
      const raw = await rawAction(
        t,
        { botId: bot.botId, key: other.key },
        { type: 'greet', input: { name: 'x' } },
      );
      assertErrorBody(raw, 403, 'Forbidden');
      await rejectsWith(
        other.client.callAction({ type: 'greet', input: { name: 'x' } }),
        ResourceNotFoundError,
      );
    });
  });
}
