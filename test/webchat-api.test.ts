// The webchat API through the official webchat client (@botpress/webchat-client, what the React webchat
// runs on), against bots deployed with the CLI: the same records as the Chat and Runtime APIs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { createClient, createUser, generateUserKey } from '@botpress/webchat-client';
import { SignJWT } from 'jose';
import { deployWithCli } from './helpers/chat-bots.ts';
import { deployPackage, json } from './helpers/deployed-bots.ts';
import type { DeployedBot } from './helpers/deployed-bots.ts';
import { waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { webchatApiUrl, webchatClientId, WebchatVisitor } from './helpers/webchat.ts';

/** A bot that greets when a webchat opens a conversation, echoes, and answers the page's custom events. */
const GREETER = {
  'bot.json': json({ formatVersion: 1, name: 'greeter' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'echo' },
      {
        id: 'echo',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'You said: {{ event.preview }}' } }],
      },
      { id: 'opened', type: 'trigger', trigger: { kind: 'conversation_started' }, next: 'greet' },
      {
        id: 'greet',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'Hello! How can I help?' } }],
      },
      { id: 'custom', type: 'trigger', trigger: { kind: 'custom_event', event: 'chat:custom' }, next: 'ack' },
      {
        id: 'ack',
        type: 'standard',
        cards: [{ type: 'say', message: { type: 'text', text: 'Got your event' } }],
      },
    ],
  }),
};

/** An error of the webchat client: it throws `Error`s carrying the body's `type`. */
async function rejectsWithType(promise: Promise<unknown>, type: string, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: Error & { type?: string; id?: string }) => {
    assert.equal(err.type, type, `error type (${err.message})`);
    assert.match(err.id ?? '', /^err_/);
    if (message) assert.match(err.message, message);
    return true;
  });
}

for (const store of await testStores()) {
  describe(`webchat API, official webchat client (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let apiUrl: string;
    let echo: { botId: string; webhookUrl: string; clientId: string };
    let menu: { botId: string; clientId: string };
    let greeter: DeployedBot & { clientId: string };
    const visitors: WebchatVisitor[] = [];
    const open = async (clientId: string, stored?: { userKey?: string; conversationId?: string }) => {
      const visitor = await WebchatVisitor.open(apiUrl, clientId, stored);
      visitors.push(visitor);
      return visitor;
    };

    before(async () => {
      t = await startTestServer(store, { chatPingIntervalMs: '500' });
      apiUrl = webchatApiUrl(t);
      const e = await deployWithCli(t, 'examples/echo-bot');
      echo = { ...e, clientId: await webchatClientId(t, e.botId) };
      const m = await deployWithCli(t, 'examples/menu-bot');
      menu = { botId: m.botId, clientId: await webchatClientId(t, m.botId) };
      const g = await deployPackage(t, GREETER);
      greeter = { ...g, clientId: await webchatClientId(t, g.botId) };
    });
    after(async () => {
      for (const visitor of visitors) visitor.close();
      await t?.close();
    });

    test('the webchat client id is the chat channel’s; getBot shows it beside the share link', async () => {
      const { bot } = await t.client().getBot({ id: echo.botId });
      const channel = bot.integrations.chat as unknown as Record<string, unknown>;
      assert.equal(channel.webchatClientId, channel.webhookId);
      assert.equal(channel.webchatShareUrl, `${t.url}/s/${echo.clientId}`);
    });

    test('a first visit creates the user and a conversation; the first frame carries them', async () => {
      const visitor = await open(echo.clientId);
      const { init } = visitor;
      assert.match(init.user.userKey, /^eyJ/, 'the key is the Chat API’s (a JWT)');
      assert.ok(init.user.id);
      assert.deepEqual(init.messages, []);
      assert.deepEqual(
        init.participants.map((p) => p.id),
        [init.user.id],
      );
      assert.deepEqual(Object.keys(init.conversation).sort(), ['createdAt', 'id', 'updatedAt']);
      const { user } = await visitor.client.getUser();
      assert.equal(user.id, init.user.id);
    });

    test('a message gets the bot’s reply live; the same conversation is on the Chat and Runtime APIs', async () => {
      const visitor = await open(echo.clientId);
      const sent = await visitor.say('Hello there', 'client-1');
      assert.deepEqual(sent.metadata, { clientMessageId: 'client-1' });
      assert.deepEqual(await visitor.botTexts(1), ['You said: Hello there']);
      const echoed = visitor.messages().find((m) => m.id === sent.id);
      assert.deepEqual(echoed?.metadata, { clientMessageId: 'client-1' }, 'the echo names the client’s id');
      assert.equal('isBot' in (echoed ?? {}), false, 'no isBot: the webchat tells the bot by its user id');
      const status = visitor.signals.find((s) => s.type === 'message_status_changed');
      assert.equal(status?.data.newStatus, 'processing');

      // The Chat API, with the same user key, sees the same conversation and messages.
      const chatClient = await chat.Client.connect({ apiUrl: echo.webhookUrl, userKey: visitor.userKey });
      const { messages } = await chatClient.listMessages({ conversationId: visitor.conversationId });
      assert.deepEqual(messages.map((m) => (m.payload as { text: string }).text).sort(), [
        'Hello there',
        'You said: Hello there',
      ]);
      // The Runtime API: the bot's own view of the conversation.
      const runtime = t.client({ botId: echo.botId });
      const { conversations } = await runtime.listConversations({ participantIds: [] });
      const ids = await Promise.all(
        conversations.map(async (c) => (await runtime.listMessages({ conversationId: c.id })).messages),
      );
      assert.ok(
        ids.some((list) => list.some((m) => m.id === sent.id)),
        'the message is in one of the bot’s conversations',
      );
    });

    test('reloading with the stored key and conversation shows the history, newest first, as the same user', async () => {
      const first = await open(echo.clientId);
      await first.say('one');
      await first.botTexts(1);
      first.close();
      const again = await open(echo.clientId, {
        userKey: first.userKey,
        conversationId: first.conversationId,
      });
      assert.equal(again.userId, first.userId);
      assert.equal(again.conversationId, first.conversationId);
      assert.deepEqual(
        again.init.messages.map((m) => (m.payload as { text: string }).text),
        ['You said: one', 'one'],
      );
      assert.equal(again.init.conversation.lastMessage?.id, again.init.messages[0]?.id);
      await again.say('two');
      assert.deepEqual(await again.botTexts(1), ['You said: two']);
    });

    test('a conversation that is not the user’s, or a key that is not valid, starts afresh', async () => {
      const owner = await open(echo.clientId);
      const other = await open(echo.clientId, {
        userKey: owner.userKey,
        conversationId: 'no-such-conversation',
      });
      assert.equal(other.userId, owner.userId);
      assert.notEqual(other.conversationId, owner.conversationId);
      const stranger = await open(echo.clientId);
      const intruder = await open(echo.clientId, {
        userKey: stranger.userKey,
        conversationId: owner.conversationId,
      });
      assert.notEqual(
        intruder.conversationId,
        owner.conversationId,
        'someone else’s conversation is not shown',
      );
      const fresh = await open(echo.clientId, { userKey: 'not-a-key' });
      assert.notEqual(fresh.userId, owner.userId);
      assert.match(fresh.userKey, /^eyJ/);
    });

    test('conversation_started: isInitial once per conversation; the bot is told once and greets', async () => {
      const visitor = await open(greeter.clientId);
      const started = {
        conversationId: visitor.conversationId,
        payload: { type: 'conversation_started' as const, data: {} },
      };
      const first = await visitor.client.createEvent(started);
      const second = await visitor.client.createEvent(started);
      const isInitial = (e: typeof first) =>
        (e.event.payload.data as { status?: { isInitial?: boolean } }).status?.isInitial;
      assert.equal(isInitial(first), true);
      assert.equal(isInitial(second), false);
      assert.equal(second.event.id, first.event.id, 'the same start, told again');
      assert.deepEqual(await visitor.botTexts(1), ['Hello! How can I help?']);
      const { events } = await greeter.client.listEvents({ type: 'webchat:conversationStarted' });
      assert.equal(events.length, 1);
      const { event } = await visitor.client.getEvent({ eventId: first.event.id });
      assert.equal(event.payload.type, 'conversation_started');
      // The greeting took the conversation's start: the first message is answered as any other.
      await visitor.say('hi');
      assert.deepEqual(await visitor.botTexts(2), ['Hello! How can I help?', 'You said: hi']);
    });

    test('custom events: the page’s reach the bot (chat:custom); the bot’s reach the page', async () => {
      const visitor = await open(greeter.clientId);
      const { event } = await visitor.client.createEvent({
        conversationId: visitor.conversationId,
        payload: { type: 'custom', data: { page: '/pricing' } },
      });
      assert.equal(event.payload.type, 'custom');
      assert.deepEqual(await visitor.botTexts(1), ['Got your event']);
      const runtimeConversation = await waitFor('the runtime conversation', async () => {
        const { conversations } = await greeter.client.listConversations({});
        for (const c of conversations) {
          const { events } = await greeter.client.listEvents({ conversationId: c.id, type: 'chat:custom' });
          if (events.some((e) => e.id === event.id)) return c.id;
        }
        return undefined;
      });
      await greeter.client.createEvent({
        type: 'showBanner',
        payload: { banner: 'sale' },
        conversationId: runtimeConversation,
      });
      await visitor.waitUntil('a custom signal', () => visitor.signals.some((s) => s.type === 'custom'));
      const custom = visitor.signals.find((s) => s.type === 'custom');
      assert.deepEqual(custom?.data, { event: { banner: 'sale' } });
    });

    test('a choice answered as the webchat sends it (label and value) moves the menu bot on', async () => {
      const visitor = await open(menu.clientId);
      await visitor.say('hi');
      const [, choice] = await visitor.botPayloads(2);
      assert.equal(choice?.type, 'choice');
      const faq = (choice?.options as { label: string; value: string }[]).find((o) => o.value === 'faq');
      assert.ok(faq);
      await visitor.client.createMessage({
        conversationId: visitor.conversationId,
        payload: { type: 'text', text: faq.label, value: faq.value },
      });
      const texts = await visitor.botTexts(3);
      assert.equal(texts[2], 'Ask me about our hours, prices or how to contact us.');
    });

    test('feedback on a message shows on it and as its Runtime API tags, until removed', async () => {
      const visitor = await open(echo.clientId);
      await visitor.say('rate me');
      await visitor.botTexts(1);
      const reply = visitor.botMessages()[0] as { id: string };
      await visitor.client.addMessageFeedback({
        messageId: reply.id,
        value: 'negative',
        comment: 'Too short',
      });
      const { message } = await visitor.client.getMessage({ messageId: reply.id });
      assert.deepEqual(message.feedback, { value: 'negative', comment: 'Too short' });
      const runtime = t.client({ botId: echo.botId });
      const tagsOf = async () => {
        const { tags } = (await runtime.getMessage({ id: reply.id })).message;
        return Object.fromEntries(Object.entries(tags).filter(([key]) => key.startsWith('webchat:')));
      };
      assert.deepEqual(await tagsOf(), {
        'webchat:feedback': 'negative',
        'webchat:feedbackComment': 'Too short',
      });
      const { messages } = await visitor.client.listConversationMessages({
        conversationId: visitor.conversationId,
      });
      assert.equal(messages.find((m) => m.id === reply.id)?.feedback?.value, 'negative');
      await visitor.client.removeMessageFeedback({ messageId: reply.id });
      assert.equal((await visitor.client.getMessage({ messageId: reply.id })).message.feedback, undefined);
      assert.deepEqual(await tagsOf(), {});
      await rejectsWithType(
        visitor.client.addMessageFeedback({ messageId: reply.id, value: 'great' as 'positive' }),
        'InvalidPayload',
      );
    });

    test('the user’s data and attributes: kept on the user, readable by the bot', async () => {
      const visitor = await open(echo.clientId);
      const { user } = await visitor.client.updateUser({
        name: 'Ada',
        userData: { plan: 'pro', seats: 3 },
        attributes: { locale: 'fr' },
      });
      assert.equal(user.name, 'Ada');
      assert.deepEqual(user.data, { plan: 'pro', seats: 3 });
      assert.deepEqual(user.attributes, { locale: 'fr' });
      assert.deepEqual((await visitor.client.getUser()).user.data, { plan: 'pro', seats: 3 });
      const runtime = t.client({ botId: echo.botId });
      const { users } = await runtime.listUsers({});
      const same = users.find((u) => u.name === 'Ada');
      assert.equal(same?.properties?.['webchat:data'], JSON.stringify({ plan: 'pro', seats: 3 }));
      assert.deepEqual(same?.attributes, { locale: 'fr' });
      const cleared = await visitor.client.updateUser({
        userData: null,
        attributes: { locale: null },
      });
      assert.equal(cleared.user.data, undefined);
      assert.equal(cleared.user.attributes, undefined);
      await rejectsWithType(visitor.client.updateUser({ userData: 'a.signed.token' }), 'InvalidPayload');
    });

    test('the user: a name over 200 characters is refused, as on the Chat API; deleteUser ends its key', async () => {
      const visitor = await open(echo.clientId);
      await rejectsWithType(visitor.client.updateUser({ name: 'n'.repeat(201) }), 'InvalidPayload', /name/);
      assert.equal((await visitor.client.updateUser({ name: 'n'.repeat(200) })).user.name?.length, 200);
      assert.deepEqual(await visitor.client.deleteUser({ userId: visitor.userId }), {});
      await rejectsWithType(visitor.client.getUser(), 'Unauthorized');
    });

    test('conversations: created, listed with their last message, read and deleted', async () => {
      const visitor = await open(echo.clientId);
      await visitor.say('first');
      await visitor.botTexts(1);
      const { conversation } = await visitor.client.createConversation();
      const { conversations } = await visitor.client.listConversations({});
      assert.deepEqual(
        conversations.map((c) => c.id),
        [conversation.id, visitor.conversationId],
      );
      assert.equal(conversations[0]?.lastMessage, undefined);
      assert.equal(
        (conversations[1]?.lastMessage?.payload as { text?: string } | undefined)?.text,
        'You said: first',
      );
      await visitor.client.deleteConversation({ conversationId: conversation.id });
      await rejectsWithType(
        visitor.client.getConversation({ conversationId: conversation.id }),
        'ResourceNotFound',
      );
      const { participants } = await visitor.client.listParticipants({
        conversationId: visitor.conversationId,
      });
      assert.deepEqual(
        participants.map((p) => p.id),
        [visitor.userId],
      );
    });

    test('a message is changed and deleted only by its sender', async () => {
      const visitor = await open(echo.clientId);
      const sent = await visitor.say('typo');
      await visitor.botTexts(1);
      const { message } = await visitor.client.updateMessage({
        messageId: sent.id,
        payload: { type: 'text', text: 'fixed' },
      });
      assert.deepEqual(message.payload, { type: 'text', text: 'fixed' });
      const reply = visitor.botMessages()[0] as { id: string };
      await rejectsWithType(
        visitor.client.updateMessage({ messageId: reply.id, payload: { type: 'text', text: 'mine now' } }),
        'Forbidden',
      );
      await rejectsWithType(visitor.client.deleteMessage({ messageId: reply.id }), 'Forbidden');
      await visitor.client.deleteMessage({ messageId: sent.id });
      await rejectsWithType(visitor.client.getMessage({ messageId: sent.id }), 'ResourceNotFound');
    });

    test('uploads are refused with a clear error until the Files API exists', async () => {
      const visitor = await open(echo.clientId);
      await rejectsWithType(
        visitor.client.createFile({ key: 'abc123-photo.png', size: 3, accessPolicies: ['public_content'] }),
        'MethodNotFound',
        /Files API/,
      );
    });

    test('an apiUrl with a trailing slash works, as the webchat joins it verbatim', async () => {
      const visitor = await WebchatVisitor.open(`${apiUrl}/`, echo.clientId);
      visitors.push(visitor);
      await visitor.say('slash');
      assert.deepEqual(await visitor.botTexts(1), ['You said: slash']);
    });

    test('an unknown client id, or a missing key, is refused with the webchat’s error body', async () => {
      await rejectsWithType(createUser({ clientId: 'no-such-client', apiUrl }), 'ResourceNotFound');
      const client = createClient({ userKey: 'not-a-key', clientId: echo.clientId, apiUrl });
      await rejectsWithType(client.getUser(), 'Unauthorized');
      const perf = await fetch(`${apiUrl}/${echo.clientId}/p`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ duration: 12, event: 'load', properties: {} }),
      });
      assert.equal(perf.status, 200);
      assert.deepEqual(await perf.json(), {}, 'every answer has a JSON body');
    });

    test('personal mode: the site signs keys (or mints them with the admin secret); no key, no chat', async () => {
      const encryptionKey = 'a-site-secret-of-32-characters!!';
      const { bot } = await t.client().createBot({ name: 'personal' });
      await t
        .client()
        .updateBot({ id: bot.id, integrations: { chat: { configuration: { encryptionKey } } } });
      const clientId = await webchatClientId(t, bot.id);
      const refused = await fetch(`${apiUrl}/${clientId}/initialize`, {
        headers: { accept: 'text/event-stream' },
      });
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as { type: string }).type, 'Unauthorized');

      const siteKey = await new SignJWT({ id: 'customer-42' })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(encryptionKey));
      const visitor = await open(clientId, { userKey: siteKey });
      assert.equal(visitor.userId, 'customer-42', 'the user is created at its first visit');

      await rejectsWithType(createUser({ clientId, apiUrl }), 'Unauthorized');
      await rejectsWithType(createUser({ clientId, apiUrl, adminSecret: 'wrong' }), 'Unauthorized');
      const created = await createUser({ clientId, apiUrl, adminSecret: encryptionKey, name: 'Grace' });
      assert.equal(created.user.name, 'Grace');
      const minted = await generateUserKey({
        clientId,
        apiUrl,
        adminSecret: encryptionKey,
        userId: 'customer-42',
        expiresAt: Date.now() + 60_000,
      });
      assert.equal(
        (await createClient({ userKey: minted.key, clientId, apiUrl }).getUser()).user.id,
        'customer-42',
      );
      const expired = await generateUserKey({
        clientId,
        apiUrl,
        adminSecret: encryptionKey,
        userId: 'customer-42',
        expiresAt: Math.floor(Date.now() / 1000) - 60,
      });
      await rejectsWithType(
        createClient({ userKey: expired.key, clientId, apiUrl }).getUser(),
        'Unauthorized',
      );
      // Shared mode has no admin secret.
      await rejectsWithType(
        generateUserKey({
          clientId: echo.clientId,
          apiUrl,
          adminSecret: 'anything',
          userId: 'x',
          expiresAt: 0,
        }),
        'Unauthorized',
      );
    });
  });
}
