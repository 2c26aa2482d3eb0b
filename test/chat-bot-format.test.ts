// The chat's messages and events as bots see them, and back, as the hosted chat integration translates
// them: metadata top-level on the chat's side and in `payload.metadata` on the bot's; bloc items
// `{ type, ...content }` and `{ type, payload }`; a custom event `chat:custom` with who sent it and where.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { createChatBot, eventually } from './helpers/sse.ts';
import type { ChatBot } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const IMAGE = 'https://example.com/cat.png';
const AUDIO = 'https://example.com/purr.mp3';

type Heard = { type: string; data: Record<string, unknown> };

/** What an official listener emits, typed signals apart from the ones its schemas refused (`unknown`). */
function hear(listener: chat.SignalListener): Heard[] {
  const heard: Heard[] = [];
  listener.on('message_created', (data) => heard.push({ type: 'message_created', data }));
  listener.on('event_created', (data) => heard.push({ type: 'event_created', data }));
  listener.on('unknown', (data) => {
    if (data !== 'ping') heard.push({ type: 'unknown', data: { raw: data } });
  });
  return heard;
}

for (const store of await testStores()) {
  describe(`chat messages and events in the bot's format (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: ChatBot;
    let user: chat.AuthenticatedClient;
    let listener: chat.SignalListener;
    let heard: Heard[];
    let conversationId: string;
    let runtimeConversationId: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createChatBot(t, 'format-bot');
      user = await chat.Client.connect({ apiUrl: bot.webhookUrl });
      ({ id: conversationId } = (await user.createConversation({})).conversation);
      listener = await user.listenConversation({ id: conversationId });
      heard = hear(listener);
      const { conversations } = await bot.client.listConversations({});
      runtimeConversationId = conversations[0]!.id;
    });
    after(async () => {
      await listener?.disconnect();
      await t?.close();
    });

    const next = async (type: string, match: (data: Record<string, unknown>) => boolean) => {
      let found: Heard | undefined;
      await eventually(`a ${type} signal`, () => {
        found = heard.find((h) => (h.type === type || h.type === 'unknown') && match(h.data));
        return found !== undefined;
      });
      assert.equal(found?.type, type, `the client's own ${type} schema accepts it: ${JSON.stringify(found)}`);
      return found.data;
    };

    test("a bot's bloc and metadata reach chat clients in the chat's shape", async () => {
      const { message } = await bot.client.createMessage({
        conversationId: runtimeConversationId,
        userId: bot.botId,
        type: 'bloc',
        tags: {},
        payload: {
          items: [
            { type: 'text', payload: { text: 'Here it is' } },
            { type: 'image', payload: { imageUrl: IMAGE } },
            { type: 'audio', payload: { audioUrl: AUDIO } },
          ],
          metadata: { source: 'bot', n: 1 },
        },
      });
      const expected = {
        payload: {
          type: 'bloc',
          items: [
            { type: 'text', text: 'Here it is' },
            { type: 'image', imageUrl: IMAGE },
            { type: 'audio', audioUrl: AUDIO },
          ],
        },
        metadata: { source: 'bot', n: 1 },
      };
      const live = await next('message_created', (d) => d.id === message.id);
      assert.deepEqual({ payload: live.payload, metadata: live.metadata }, expected);
      assert.equal(live.isBot, true);
      const { message: read } = await user.getMessage({ id: message.id });
      assert.deepEqual({ payload: read.payload, metadata: read.metadata }, expected);
      const { messages } = await user.listMessages({ conversationId });
      const listed = messages.find((m) => m.id === message.id);
      assert.deepEqual({ payload: listed?.payload, metadata: listed?.metadata }, expected);
      // The bot reads back what it wrote.
      const { message: runtime } = await bot.client.getMessage({ id: message.id });
      assert.deepEqual(runtime.payload, {
        items: [
          { type: 'text', payload: { text: 'Here it is' } },
          { type: 'image', payload: { imageUrl: IMAGE } },
          { type: 'audio', payload: { audioUrl: AUDIO } },
        ],
        metadata: { source: 'bot', n: 1 },
      });
    });

    test('a bot message without metadata has none on the chat side, and its payload keeps its fields', async () => {
      const { message } = await bot.client.createMessage({
        conversationId: runtimeConversationId,
        userId: bot.botId,
        type: 'card',
        tags: {},
        payload: { title: 'A card', actions: [{ action: 'say', label: 'Hi', value: 'hi' }] },
      });
      const live = await next('message_created', (d) => d.id === message.id);
      assert.equal('metadata' in live, false);
      assert.deepEqual(live.payload, {
        type: 'card',
        title: 'A card',
        actions: [{ action: 'say', label: 'Hi', value: 'hi' }],
      });
    });

    test("a bot's carousel of cards without `type` (the SDK's shape) is the chat's carousel of cards", async () => {
      const card = { title: 'One', actions: [{ action: 'postback', label: 'Pick', value: 'one' }] };
      const { message } = await bot.client.createMessage({
        conversationId: runtimeConversationId,
        userId: bot.botId,
        type: 'carousel',
        tags: {},
        payload: { items: [card, { ...card, title: 'Two' }] },
      });
      const live = await next('message_created', (d) => d.id === message.id);
      assert.deepEqual(live.payload, {
        type: 'carousel',
        items: [
          { type: 'card', ...card },
          { type: 'card', ...card, title: 'Two' },
        ],
      });
    });

    test("a user's bloc and metadata reach the bot in the bot's shape", async () => {
      const { message } = await user.createMessage({
        conversationId,
        payload: {
          type: 'bloc',
          items: [
            { type: 'text', text: 'Look' },
            { type: 'location', latitude: 45.5, longitude: -73.6, title: 'Here' },
          ],
        },
        metadata: { clientMessageId: 'c-1' },
      });
      const { message: runtime } = await bot.client.getMessage({ id: message.id });
      assert.equal(runtime.type, 'bloc');
      assert.deepEqual(runtime.payload, {
        items: [
          { type: 'text', payload: { text: 'Look' } },
          { type: 'location', payload: { latitude: 45.5, longitude: -73.6, title: 'Here' } },
        ],
        metadata: { clientMessageId: 'c-1' },
      });
      const { messages } = await bot.client.listMessages({ conversationId: runtimeConversationId });
      assert.deepEqual(messages.find((m) => m.id === message.id)?.payload, runtime.payload);
      // The user's own view is what they sent.
      const live = await next('message_created', (d) => d.id === message.id);
      assert.deepEqual(live.payload, message.payload);
      assert.deepEqual(live.metadata, { clientMessageId: 'c-1' });
      assert.deepEqual((await user.getMessage({ id: message.id })).message, message);
    });

    test('a custom event reaches the bot as chat:custom with who and where, and chat:sendEvent takes it back', async () => {
      const payload = { kind: 'cart', items: [1, 2], nested: { ok: true } };
      const { event } = await user.createEvent({ conversationId, payload });
      assert.deepEqual(event.payload, payload);
      const { event: runtime } = await bot.client.getEvent({ id: event.id });
      assert.equal(runtime.type, 'chat:custom');
      assert.deepEqual(runtime.payload, {
        userId: runtime.userId,
        conversationId: runtimeConversationId,
        payload,
      });
      const { user: sender } = await bot.client.getUser({ id: runtime.userId ?? '' });
      assert.ok(sender.id, 'the sender is a runtime user the bot can read');
      assert.deepEqual((await user.getEvent({ id: event.id })).event, event, 'the chat sees its own payload');
      const fromUser = await next('event_created', (d) => d.id === event.id);
      assert.deepEqual(fromUser.payload, payload);
      assert.equal(fromUser.isBot, false);

      // As a bot written the hosted way forwards it: the event's payload as the action's input.
      const { output } = await bot.client.callAction({ type: 'chat:sendEvent', input: runtime.payload });
      assert.deepEqual(output, {});
      const fromBot = await next('event_created', (d) => d.isBot === true);
      assert.deepEqual(fromBot.payload, payload);
      assert.equal(fromBot.conversationId, conversationId);
      assert.equal(fromBot.id, null);
    });
  });
}
