import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { assertTimestamp, unique } from './helpers/runtime.ts';
import { assertChatError, chatRejects, createChatBot, rawChat } from './helpers/sse.ts';
import type { ChatBot } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

type Payload = Parameters<chat.AuthenticatedClient['createMessage']>[0]['payload'];

const card = {
  type: 'card' as const,
  title: 'A card',
  subtitle: 'below',
  imageUrl: 'https://example.com/c.png',
  actions: [
    { action: 'postback' as const, label: 'Yes', value: 'yes' },
    { action: 'url' as const, label: 'Site', value: 'https://example.com' },
    { action: 'say' as const, label: 'Say', value: 'hello' },
  ],
};

/** One valid payload of each of the 12 types. */
const PAYLOADS: Payload[] = [
  { type: 'text', text: 'hello' },
  { type: 'markdown', markdown: '**bold**' },
  { type: 'image', imageUrl: 'https://example.com/i.png' },
  { type: 'audio', audioUrl: 'https://example.com/a.mp3' },
  { type: 'video', videoUrl: 'https://example.com/v.mp4' },
  { type: 'file', fileUrl: 'https://example.com/f.pdf', title: 'F' },
  { type: 'location', latitude: 45.5, longitude: -73.6, address: '1 Main St', title: 'Here' },
  card,
  { type: 'carousel', items: [card, { ...card, title: 'Second' }] },
  { type: 'choice', text: 'Pick one', options: [{ label: 'A', value: 'a' }] },
  { type: 'dropdown', text: 'Choose', options: [{ label: 'B', value: 'b' }] },
  {
    type: 'bloc',
    items: [
      { type: 'text', text: 't' },
      { type: 'markdown', markdown: 'm' },
      { type: 'image', imageUrl: 'i' },
      { type: 'audio', audioUrl: 'a' },
      { type: 'video', videoUrl: 'v' },
      { type: 'file', fileUrl: 'f' },
      { type: 'location', latitude: 1, longitude: 2 },
    ],
  },
];

/** Invalid payloads, with the field the error message must name. */
const INVALID: { payload: unknown; field: RegExp }[] = [
  { payload: { type: 'text' }, field: /text/ },
  { payload: { type: 'text', text: '' }, field: /text/ },
  { payload: { type: 'text', text: 5 }, field: /text/ },
  { payload: { type: 'markdown', markdown: '' }, field: /markdown/ },
  { payload: { type: 'image' }, field: /imageUrl/ },
  { payload: { type: 'audio', audioUrl: '' }, field: /audioUrl/ },
  { payload: { type: 'video', videoUrl: null }, field: /videoUrl/ },
  { payload: { type: 'file', fileUrl: 'f', title: '' }, field: /title/ },
  { payload: { type: 'location', latitude: 'north', longitude: 1 }, field: /latitude/ },
  {
    payload: { type: 'card', title: 'c', actions: [{ action: 'jump', label: 'l', value: 'v' }] },
    field: /action/,
  },
  { payload: { type: 'card', title: '', actions: [] }, field: /title/ },
  { payload: { type: 'carousel', items: [{ type: 'card', title: 't' }] }, field: /actions/ },
  { payload: { type: 'choice', text: 'c', options: [{ label: 'l' }] }, field: /value/ },
  { payload: { type: 'dropdown', text: 'd' }, field: /options/ },
  { payload: { type: 'bloc', items: [{ type: 'image' }] }, field: /imageUrl/ },
  { payload: { type: 'bloc', items: [{ type: 'card', title: 't', actions: [] }] }, field: /type|items/ },
  { payload: { type: 'nonsense', text: 'x' }, field: /type/ },
  { payload: { text: 'no type' }, field: /type/ },
];

for (const store of await testStores()) {
  describe(`chat messages and events (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: ChatBot;
    let alice: chat.AuthenticatedClient;
    let bob: chat.AuthenticatedClient;
    let conversationId: string;
    /** The runtime id of the conversation, for the bot's replies. */
    let runtimeConversationId: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createChatBot(t, 'chat-messages');
      alice = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'alice' });
      bob = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'bob' });
      conversationId = (await alice.createConversation({ id: 'talk' })).conversation.id;
      await alice.addParticipant({ conversationId, userId: bob.user.id });
      const { conversations } = await bot.client.listConversations({
        channel: 'channel',
        integrationName: 'chat',
      });
      assert.equal(conversations.length, 1);
      runtimeConversationId = conversations[0]!.id;
    });
    after(() => t.close());

    // Their user is read with the conversation and the participant (Chat.admit, then one statement): each
    // refusal as when the user was read first, on both APIs that queue a turn.
    test('a message or event: a gone user 401, an unknown conversation 404, a non-participant 403', async () => {
      const webchatUrl = bot.webhookUrl.replace(/\/chat\/([^/]+)$/, '/webchat/$1');
      const carol = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'carol' });
      const gone = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'gone' });
      await gone.deleteUser({});
      const text = { type: 'text', text: 'x' };
      const sends = [
        (key: string, to: string) =>
          rawChat(bot.webhookUrl, 'POST', '/messages', { key, body: { conversationId: to, payload: text } }),
        (key: string, to: string) =>
          rawChat(bot.webhookUrl, 'POST', '/events', { key, body: { conversationId: to, payload: {} } }),
        (key: string, to: string) =>
          rawChat(webchatUrl, 'POST', '/messages', { key, body: { conversationId: to, payload: text } }),
      ];
      for (const send of sends) {
        const unknownUser = await send(gone.user.key, conversationId);
        assert.equal(unknownUser.status, 401, JSON.stringify(unknownUser.body));
        assert.match(
          (unknownUser.body as { message: string }).message,
          /The user "gone" of this key does not exist: call getOrCreateUser first/,
        );
        assertChatError(await send(alice.user.key, 'no-such-conversation'), 404, 'ResourceNotFound');
        assertChatError(await send(carol.user.key, conversationId), 403, 'Forbidden');
      }
    });

    test('createMessage answers 201 for each of the 12 payload types, and keeps payload and metadata', async () => {
      for (const [i, payload] of PAYLOADS.entries()) {
        const metadata = { index: i, nested: { ok: true }, list: [1, 'two'] };
        const res = await rawChat(bot.webhookUrl, 'POST', '/messages', {
          key: alice.user.key,
          body: { payload, conversationId, metadata },
        });
        assert.equal(res.status, 201, `${payload.type}: ${JSON.stringify(res.body)}`);
        const { message } = res.body as { message: chat.Message };
        assert.equal(typeof message.id, 'string');
        assertTimestamp(message.createdAt);
        assert.deepEqual(message.payload, payload);
        assert.equal(message.userId, 'alice');
        assert.equal(message.conversationId, 'talk');
        assert.deepEqual(message.metadata, metadata);

        const { message: got } = await bob.getMessage({ id: message.id });
        assert.deepEqual(got, message, `${payload.type} reads back the same`);
      }
    });

    test('a message without metadata has none', async () => {
      const { message } = await alice.createMessage({
        conversationId,
        payload: { type: 'text', text: 'plain' },
      });
      assert.ok(!('metadata' in message));
      assert.ok(!('metadata' in (await alice.getMessage({ id: message.id })).message));
    });

    test('an invalid payload answers 400 InvalidPayload naming the field', async () => {
      for (const { payload, field } of INVALID) {
        const res = await rawChat(bot.webhookUrl, 'POST', '/messages', {
          key: alice.user.key,
          body: { payload, conversationId },
        });
        assertChatError(res, 400, 'InvalidPayload');
        assert.match((res.body as { message: string }).message, field, JSON.stringify(payload));
      }
      const err = await chatRejects(
        alice.createMessage({ conversationId, payload: { type: 'text', text: '' } }),
        chat.InvalidPayloadError,
        'InvalidPayload',
        400,
      );
      assert.match(err.message, /text/);
      for (const body of [
        { conversationId },
        { payload: { type: 'text', text: 'x' } },
        { payload: { type: 'text', text: 'x' }, conversationId, metadata: 'm' },
      ]) {
        assertChatError(
          await rawChat(bot.webhookUrl, 'POST', '/messages', { key: alice.user.key, body }),
          400,
          'InvalidPayload',
        );
      }
      assertChatError(
        await rawChat(bot.webhookUrl, 'POST', '/messages', { key: alice.user.key, body: '{"payload":' }),
        400,
        'InvalidPayload',
      );
      const { messages } = await alice.listMessages({ conversationId });
      assert.ok(
        !messages.some((m) => (m.payload.type as string) === 'nonsense'),
        'nothing invalid was stored',
      );
    });

    test('a payload that is no object, or a bloc item that is none, answers 400 InvalidPayload', async () => {
      const cases: { payload: unknown; field: RegExp }[] = [
        { payload: 'text', field: /payload/ },
        { payload: null, field: /payload/ },
        { payload: [], field: /payload/ },
        { payload: 5, field: /payload/ },
        { payload: { type: 'bloc', items: ['x'] }, field: /items/ },
        { payload: { type: 'bloc', items: [null] }, field: /items/ },
      ];
      const problems: string[] = [];
      for (const { payload, field } of cases) {
        const res = await rawChat(bot.webhookUrl, 'POST', '/messages', {
          key: alice.user.key,
          body: { payload, conversationId },
        });
        const body = res.body as { type?: string; message?: string };
        if (res.status !== 400 || body.type !== 'InvalidPayload' || !field.test(body.message ?? '')) {
          problems.push(`${JSON.stringify(payload)} -> ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      assert.deepEqual(problems, [], 'every one is refused with 400 InvalidPayload naming the field');
    });

    test('a body over 1 MB answers 413; one just under is accepted', async () => {
      const MB = 1024 * 1024;
      const overhead = JSON.stringify({ payload: { type: 'text', text: '' }, conversationId }).length;
      const under = 'u'.repeat(MB - overhead - 100);
      const { message } = await alice.createMessage({
        conversationId,
        payload: { type: 'text', text: under },
      });
      assert.equal((await alice.getMessage({ id: message.id })).message.payload.text, under);

      const over = 'o'.repeat(MB + 10);
      await chatRejects(
        alice.createMessage({ conversationId, payload: { type: 'text', text: over } }),
        chat.PayloadTooLargeError,
        'PayloadTooLarge',
        413,
      );
      const raw = await rawChat(bot.webhookUrl, 'POST', '/events', {
        key: alice.user.key,
        body: { conversationId, payload: { big: over } },
      });
      assertChatError(raw, 413, 'PayloadTooLarge');
      const user = await rawChat(bot.webhookUrl, 'PUT', '/users/me', {
        key: alice.user.key,
        body: { name: 'n', pictureUrl: over },
      });
      assertChatError(user, 413, 'PayloadTooLarge');
    });

    test('listMessages: every message of the conversation, most recent first, page by page; bot replies included', async () => {
      const { conversation } = await alice.createConversation({ id: unique('pages') });
      await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id });
      const sent: string[] = [];
      for (let i = 0; i < 23; i++) {
        const sender = i % 2 === 0 ? alice : bob;
        sent.push(
          (
            await sender.createMessage({
              conversationId: conversation.id,
              payload: { type: 'text', text: `m${i}` },
            })
          ).message.id,
        );
      }
      const first = await bob.listMessages({ conversationId: conversation.id });
      assert.ok(first.meta.nextToken, 'more than one page');
      const all = await bob.list.messages({ conversationId: conversation.id }).collect();
      assert.deepEqual(
        all.map((m) => m.id),
        [...sent].reverse(),
      );
      assert.deepEqual(
        all.map((m) => m.userId),
        sent.map((_, i) => (i % 2 === 0 ? 'alice' : 'bob')).reverse(),
      );
    });

    test('a bot reply through the Runtime API is a message of the conversation from the bot', async () => {
      const { message: reply } = await bot.client.createMessage({
        conversationId: runtimeConversationId,
        userId: bot.botId,
        type: 'text',
        payload: { text: 'I am the bot' },
        tags: {},
      });
      const { message } = await alice.getMessage({ id: reply.id });
      assert.deepEqual(message.payload, { type: 'text', text: 'I am the bot' });
      assert.equal(message.userId, bot.botId);
      assert.equal(message.conversationId, 'talk');
      assert.equal((await bob.listMessages({ conversationId })).messages[0]?.id, reply.id);
      await chatRejects(alice.deleteMessage({ id: reply.id }), chat.ForbiddenError, 'Forbidden', 403);
    });

    test('a chat message is the runtime message of the conversation, from the chat user', async () => {
      const { message } = await alice.createMessage({
        conversationId,
        payload: { type: 'choice', text: 'Pick', options: [{ label: 'X', value: 'x' }] },
        metadata: { from: 'test' },
      });
      const { message: runtime } = await bot.client.getMessage({ id: message.id });
      assert.equal(runtime.conversationId, runtimeConversationId);
      assert.equal(runtime.type, 'choice');
      // The chat's metadata is part of what the bot sees, as the hosted chat integration maps it.
      assert.deepEqual(runtime.payload, {
        text: 'Pick',
        options: [{ label: 'X', value: 'x' }],
        metadata: { from: 'test' },
      });
      assert.equal(runtime.direction, 'incoming');
      const { user } = await bot.client.getUser({ id: runtime.userId });
      assert.notEqual(user.id, 'alice');
      const { events } = await bot.client.listEvents({ messageId: message.id });
      assert.ok(
        events.some((e) => e.type === 'message_created'),
        'the bot is told of the message',
      );
    });

    test('deleteMessage: only the sender deletes a message', async () => {
      const { message } = await alice.createMessage({
        conversationId,
        payload: { type: 'text', text: 'mine' },
      });
      await chatRejects(bob.deleteMessage({ id: message.id }), chat.ForbiddenError, 'Forbidden', 403);
      assert.equal((await bob.getMessage({ id: message.id })).message.id, message.id, 'still there');
      const res = await rawChat(bot.webhookUrl, 'DELETE', `/messages/${message.id}`, {
        key: alice.user.key,
        body: {},
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      await chatRejects(
        alice.getMessage({ id: message.id }),
        chat.ResourceNotFoundError,
        'ResourceNotFound',
        404,
      );
      await chatRejects(
        alice.deleteMessage({ id: message.id }),
        chat.ResourceNotFoundError,
        'ResourceNotFound',
        404,
      );
      assert.ok(!(await alice.listMessages({ conversationId })).messages.some((m) => m.id === message.id));
    });

    test('createEvent answers 201; getEvent reads it; it is a pending chat:custom runtime event', async () => {
      const payload = { kind: 'typing', deep: { list: [1, 2], flag: false } };
      const res = await rawChat(bot.webhookUrl, 'POST', '/events', {
        key: bob.user.key,
        body: { conversationId, payload },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const { event } = res.body as { event: chat.Event };
      assert.equal(typeof event.id, 'string');
      assertTimestamp(event.createdAt);
      assert.deepEqual(event.payload, payload);
      assert.equal(event.conversationId, 'talk');
      assert.equal(event.userId, 'bob');
      assert.deepEqual((await alice.getEvent({ id: event.id })).event, event);

      const { event: runtime } = await bot.client.getEvent({ id: event.id });
      assert.equal(runtime.type, 'chat:custom');
      assert.equal(runtime.status, 'pending');
      assert.equal(runtime.conversationId, runtimeConversationId);
      // The bot learns who sent it and where, in ids it can use on the Runtime API.
      assert.deepEqual(runtime.payload, {
        userId: runtime.userId,
        conversationId: runtimeConversationId,
        payload,
      });

      await chatRejects(
        alice.createEvent({ conversationId, payload: 'no' as unknown as Record<string, unknown> }),
        chat.InvalidPayloadError,
        'InvalidPayload',
        400,
      );
      await chatRejects(
        alice.getEvent({ id: 'evt_unknown' }),
        chat.ResourceNotFoundError,
        'ResourceNotFound',
        404,
      );
    });

    test('an event the bot creates in the conversation reads as the bot’s', async () => {
      const { event: created } = await bot.client.createEvent({
        type: 'custom:thing',
        payload: { from: 'bot' },
        conversationId: runtimeConversationId,
      });
      const { event } = await alice.getEvent({ id: created.id });
      assert.equal(event.conversationId, 'talk');
      assert.deepEqual(event.payload, { from: 'bot' });
      assert.equal(event.userId, bot.botId);
    });

    test('messages of another bot are not found through this channel', async () => {
      const other = await createChatBot(t, 'chat-messages-other');
      const carol = await chat.Client.connect({ apiUrl: other.webhookUrl, userId: 'alice' });
      const { conversation } = await carol.createConversation({ id: 'talk' });
      const { message } = await carol.createMessage({
        conversationId: conversation.id,
        payload: { type: 'text', text: 'elsewhere' },
      });
      await chatRejects(
        alice.getMessage({ id: message.id }),
        chat.ResourceNotFoundError,
        'ResourceNotFound',
        404,
      );
      assert.ok(
        !(await alice.listMessages({ conversationId: 'talk' })).messages.some((m) => m.id === message.id),
      );
    });
  });
}
