import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import {
  assertId,
  assertNoRepeats,
  assertTimestamp,
  createTestBot,
  ids,
  rawRuntime,
  rejectsWith,
  sleep,
  unique,
  unknownId,
  walkPages,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`runtime messages (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let conversationId: string;
    let userId: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t);
      conversationId = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      userId = (await bot.client.createUser({ tags: {}, name: 'Ada' })).user.id;
      await bot.client.addParticipant({ id: conversationId, userId });
    });
    after(() => t.close());

    const text = (conversation: string, user: string, body: string, tags: Record<string, string> = {}) =>
      bot.client.createMessage({
        conversationId: conversation,
        userId: user,
        type: 'text',
        payload: { text: body },
        tags,
      });

    test('a message from a user is incoming, and getMessage reads it back', async () => {
      const { message } = await bot.client.createMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'hello', extra: { n: 1 } },
        tags: { 'chat:id': 'ext-1', k: 'v' },
      });
      assertId(message.id, 'msg');
      assertTimestamp(message.createdAt, 'createdAt');
      assertTimestamp(message.updatedAt, 'updatedAt');
      assert.equal(message.direction, 'incoming');
      assert.equal(message.type, 'text');
      assert.deepEqual(message.payload, { text: 'hello', extra: { n: 1 } });
      assert.equal(message.userId, userId);
      assert.equal(message.conversationId, conversationId);
      assert.deepEqual(message.tags, { 'chat:id': 'ext-1', k: 'v' });

      const got = await bot.client.getMessage({ id: message.id });
      assert.deepEqual(got.message, message);
    });

    test('an incoming message is queued for the bot as a pending message_created event', async () => {
      const { message } = await text(conversationId, userId, 'queue me');
      const { events } = await bot.client.listEvents({ messageId: message.id });
      const created = events.filter((e) => e.type === 'message_created');
      assert.equal(created.length, 1, 'one message_created event for the message');
      const event = created[0]!;
      assertId(event.id, 'evt');
      assertTimestamp(event.createdAt, 'event createdAt');
      assert.equal(event.status, 'pending');
      assert.equal(event.messageId, message.id);
      assert.equal(event.conversationId, conversationId);
      assert.equal(event.userId, userId);
      assert.equal(event.failureReason, null);

      const byType = await bot.client.listEvents({
        type: 'message_created',
        conversationId,
        status: 'pending',
      });
      assert.ok(ids(byType.events).includes(event.id));
      assert.equal((await bot.client.getEvent({ id: event.id })).event.status, 'pending');
    });

    test('a message from the bot (userId = bot id) is outgoing and is not queued for the bot', async () => {
      const { message } = await text(conversationId, bot.botId, 'hi, I am the bot');
      assert.equal(message.direction, 'outgoing');
      assert.equal(message.userId, bot.botId);
      const { events } = await bot.client.listEvents({ messageId: message.id, type: 'message_created' });
      assert.deepEqual(events, []);
    });

    test('createMessage answers 201', async () => {
      const res = await rawRuntime(t, bot, 'POST', '/v1/chat/messages', {
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'raw' },
        tags: {},
      });
      assert.equal(res.status, 201);
      const { message } = res.body as { message: { id: string; direction: string } };
      assertId(message.id, 'msg');
      assert.equal(message.direction, 'incoming');
      assert.equal((await rawRuntime(t, bot, 'GET', `/v1/chat/messages/${message.id}`)).status, 200);
    });

    test('createMessage with an unknown user or conversation answers ResourceNotFound', async () => {
      await rejectsWith(text(conversationId, unknownId('user'), 'x'), ResourceNotFoundError);
      await rejectsWith(text(unknownId('conv'), userId, 'x'), ResourceNotFoundError);
      await rejectsWith(bot.client.getMessage({ id: unknownId('msg') }), ResourceNotFoundError);
      await rejectsWith(bot.client.updateMessage({ id: unknownId('msg'), tags: {} }), ResourceNotFoundError);
      await rejectsWith(bot.client.deleteMessage({ id: unknownId('msg') }), ResourceNotFoundError);
    });

    test('createMessage into a conversation of another bot answers ResourceNotFound', async () => {
      const other = await createTestBot(t, 'other-bot');
      const { conversation } = await other.client.createConversation({ channel: 'web', tags: {} });
      await rejectsWith(text(conversation.id, userId, 'intrusion'), ResourceNotFoundError);
      const otherUser = (await other.client.createUser({ tags: {} })).user.id;
      await rejectsWith(text(conversationId, otherUser, 'intrusion'), ResourceNotFoundError);
      assert.equal(
        (await other.client.getConversation({ id: conversation.id })).conversation.messageCount,
        0,
      );
    });

    test('invalid message bodies answer InvalidPayload naming the field', async () => {
      await rejectsWith(
        bot.client.createMessage({
          conversationId,
          userId,
          type: 'text',
          payload: 'hello',
          tags: {},
        } as never),
        InvalidPayloadError,
        /payload/,
      );
      await rejectsWith(
        bot.client.createMessage({ conversationId, userId, payload: { text: 'x' }, tags: {} } as never),
        InvalidPayloadError,
        /type/,
      );
      await rejectsWith(
        bot.client.createMessage({ conversationId, type: 'text', payload: { text: 'x' }, tags: {} } as never),
        InvalidPayloadError,
        /userId/,
      );
      await rejectsWith(
        bot.client.createMessage({ conversationId, userId, type: 't'.repeat(201), payload: {}, tags: {} }),
        InvalidPayloadError,
        /type/,
      );
    });

    test('getOrCreateMessage matches on the tags, with or without discriminateByTags', async () => {
      const ext = unique('ext');
      const first = await bot.client.getOrCreateMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'once' },
        tags: { ext, rev: '1' },
        discriminateByTags: ['ext'],
      });
      assert.equal(first.meta.created, true);
      assertId(first.message.id, 'msg');
      assert.equal(first.message.direction, 'incoming');
      assert.deepEqual(first.message.payload, { text: 'once' });

      const again = await bot.client.getOrCreateMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'twice' },
        tags: { ext, rev: '2' },
        discriminateByTags: ['ext'],
      });
      assert.equal(again.meta.created, false);
      assert.equal(again.message.id, first.message.id);
      const { messages } = await bot.client.listMessages({ conversationId, tags: { ext } });
      assert.deepEqual(ids(messages), [first.message.id]);

      const plain = unique('plain');
      const a = await bot.client.getOrCreateMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'a' },
        tags: { plain, x: '1' },
      });
      const b = await bot.client.getOrCreateMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'a' },
        tags: { plain, x: '1' },
      });
      const c = await bot.client.getOrCreateMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'a' },
        tags: { plain, x: '2' },
      });
      assert.deepEqual([a.meta.created, b.meta.created, c.meta.created], [true, false, true]);
      assert.equal(b.message.id, a.message.id);
      assert.notEqual(c.message.id, a.message.id);
    });

    test('updateMessage replaces the payload and sets tags; a null tag deletes it', async () => {
      const { message } = await bot.client.createMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'draft', extra: true },
        tags: { a: '1', b: '2' },
      });
      await sleep(15);
      const { message: updated } = await bot.client.updateMessage({
        id: message.id,
        payload: { text: 'final' },
        tags: { a: null, c: '3' },
      });
      assert.deepEqual(updated.payload, { text: 'final' });
      assert.deepEqual(updated.tags, { b: '2', c: '3' });
      assert.equal(updated.createdAt, message.createdAt);
      assert.ok(updated.updatedAt > message.updatedAt, 'updatedAt moves forward');
      const { message: got } = await bot.client.getMessage({ id: message.id });
      assert.deepEqual(got.payload, { text: 'final' });
      assert.deepEqual(got.tags, { b: '2', c: '3' });

      const { message: tagsOnly } = await bot.client.updateMessage({ id: message.id, tags: { d: '4' } });
      assert.deepEqual(tagsOnly.payload, { text: 'final' }, 'a tags-only update keeps the payload');
      assert.deepEqual(tagsOnly.tags, { b: '2', c: '3', d: '4' });
    });

    test('deleteMessage removes the message', async () => {
      const { message } = await text(conversationId, userId, 'bye');
      assert.deepEqual(await bot.client.deleteMessage({ id: message.id }), {});
      await rejectsWith(bot.client.getMessage({ id: message.id }), ResourceNotFoundError);
      const { messages } = await bot.client.listMessages({ conversationId, pageSize: 100 });
      assert.ok(!ids(messages).includes(message.id));
    });

    describe('listMessages', () => {
      let conv: string;
      let other: string;
      let M: string[];
      let mid: string;
      before(async () => {
        conv = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
        other = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
        M = [];
        for (let i = 0; i < 5; i++) {
          if (i === 3) {
            await sleep(15);
            mid = new Date().toISOString();
            await sleep(15);
          }
          const sender = i % 2 === 0 ? userId : bot.botId;
          M.push((await text(conv, sender, `m${i}`, { parity: i % 2 === 0 ? 'even' : 'odd' })).message.id);
        }
        await text(other, userId, 'elsewhere', { parity: 'even' });
      });

      test('by conversation, newest first', async () => {
        const { messages, meta } = await bot.client.listMessages({ conversationId: conv });
        assert.deepEqual(ids(messages), [...M].reverse());
        assert.equal(meta.nextToken, undefined);
        assert.deepEqual(
          messages.map((m) => m.direction),
          ['incoming', 'outgoing', 'incoming', 'outgoing', 'incoming'],
        );
      });

      test('by tags', async () => {
        const { messages } = await bot.client.listMessages({ conversationId: conv, tags: { parity: 'odd' } });
        assert.deepEqual(ids(messages), [M[3], M[1]]);
        const everywhere = await bot.client.listMessages({ tags: { parity: 'even' }, pageSize: 100 });
        const evens = ids(everywhere.messages);
        for (const id of [M[0], M[2], M[4]]) assert.ok(evens.includes(id!));
        assert.ok(!evens.includes(M[1]!));
      });

      test('by afterDate and beforeDate', async () => {
        const later = await bot.client.listMessages({ conversationId: conv, afterDate: mid });
        assert.deepEqual(ids(later.messages), [M[4], M[3]]);
        const earlier = await bot.client.listMessages({ conversationId: conv, beforeDate: mid });
        assert.deepEqual(ids(earlier.messages), [M[2], M[1], M[0]]);
      });

      test('pages with pageSize and nextToken', async () => {
        const p1 = await bot.client.listMessages({ conversationId: conv, pageSize: 2 });
        const p2 = await bot.client.listMessages({
          conversationId: conv,
          pageSize: 2,
          nextToken: p1.meta.nextToken,
        });
        const p3 = await bot.client.listMessages({
          conversationId: conv,
          pageSize: 2,
          nextToken: p2.meta.nextToken,
        });
        assert.deepEqual(
          [ids(p1.messages), ids(p2.messages), ids(p3.messages)],
          [[M[4], M[3]], [M[2], M[1]], [M[0]]],
        );
        assert.ok(p1.meta.nextToken && p2.meta.nextToken);
        assert.equal(p3.meta.nextToken, undefined);
        const collected = await bot.client.list.messages({ conversationId: conv, pageSize: 2 }).collect();
        assert.deepEqual(ids(collected), [...M].reverse());
      });

      test('an unknown conversation lists nothing or answers ResourceNotFound', async () => {
        try {
          const { messages } = await bot.client.listMessages({ conversationId: unknownId('conv') });
          assert.deepEqual(messages, []);
        } catch (err) {
          assert.ok(err instanceof ResourceNotFoundError, `got ${String(err)}`);
        }
      });
    });

    test('a walk over messages with pageSize 3 never repeats or skips while messages arrive', async () => {
      const conv = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      const stable: string[] = [];
      for (let i = 0; i < 12; i++) stable.push((await text(conv, userId, `s${i}`)).message.id);
      const pages = await walkPages(
        async (nextToken) => {
          const page = await bot.client.listMessages({ conversationId: conv, pageSize: 3, nextToken });
          return { ids: ids(page.messages), nextToken: page.meta.nextToken };
        },
        async (i) => {
          await text(conv, userId, `during ${i}`);
          await text(conv, bot.botId, `reply ${i}`);
        },
      );
      const served = pages.flat();
      assertNoRepeats(served);
      assert.deepEqual(
        stable.filter((id) => !served.includes(id)),
        [],
      );
      assert.equal(pages.length, 4);
    });
  });
}
