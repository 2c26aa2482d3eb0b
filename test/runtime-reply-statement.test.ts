// A bot's message in a conversation of the chat channel (a turn's reply) is one statement
// (src/domain/runtime/messages.ts: insertChatReply's CTEs on PostgreSQL, insertChatReplyWritten's view
// on SQLite); any other message takes the general path. Both stores: the message is stored, counted and
// signalled the same either way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResourceNotFoundError } from '@botpress/client';
import { createTestBot, statementsRun, unique } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/**
 * PostgreSQL: one statement (insertChatReply). SQLite: the group's begin and commit around one insert
 * into the view `chat_reply_writes` (the conversation's count, the message and its signal).
 */
const REPLY_STATEMENTS = { postgres: 1, sqlite: 3 };

for (const store of await testStores()) {
  describe(`a bot's message in a chat conversation (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'replies');
    });
    after(() => t.close());

    test('is stored, counted and signalled, in order, in one statement (on SQLite, with its group’s begin and commit)', async () => {
      const { conversation } = await bot.client.createConversation({ channel: 'channel', tags: {} });
      const { user } = await bot.client.createUser({ tags: {} });
      const before = await t.server.domain.log.lastSeq(conversation.id);
      const costs: number[] = [];
      const ids: string[] = [];
      // Other work of the server (its polls and sweeps) may run statements meanwhile: the least of the
      // messages is the cost. At least five are sent, and more (up to 20) while none has cost only its own.
      for (let i = 0; i < 20 && (i < 5 || Math.min(...costs) > REPLY_STATEMENTS[store.name]); i++) {
        const start = await statementsRun(t);
        const { message } = await bot.client.createMessage({
          conversationId: conversation.id,
          userId: bot.botId,
          type: 'text',
          payload: { text: `reply ${i}` },
          tags: {},
        });
        costs.push((await statementsRun(t)) - start);
        ids.push(message.id);
        assert.equal(message.direction, 'outgoing');
        assert.deepEqual(message.payload, { text: `reply ${i}` });
        assert.deepEqual(message.tags, {});
      }
      assert.equal(
        Math.min(...costs),
        REPLY_STATEMENTS[store.name],
        `statements per message: ${costs.join(', ')}`,
      );

      const { messages } = await bot.client.listMessages({ conversationId: conversation.id });
      assert.deepEqual(messages.map((m) => m.id).sort(), [...ids].sort());
      const stored = await bot.client.getMessage({ id: ids[0] ?? '' });
      assert.deepEqual(stored.message.payload, { text: 'reply 0' });
      const signals = await t.server.domain.log.since(
        conversation.id,
        before,
        await t.server.domain.log.lastSeq(conversation.id),
      );
      assert.deepEqual(
        signals.map((s) => s.seq),
        ids.map((_, i) => before + i + 1),
      );
      assert.deepEqual(
        signals.map((s) => (JSON.parse(s.frame) as { data: { payload: unknown } }).data.payload),
        ids.map((_, i) => ({ type: 'text', text: `reply ${i}` })),
      );
      // A user's message after them takes the next number.
      await bot.client.createMessage({
        conversationId: conversation.id,
        userId: user.id,
        type: 'text',
        payload: { text: 'hi' },
        tags: {},
      });
      assert.equal(
        await t.server.domain.log.lastSeq(conversation.id),
        before + ids.length + 2,
        'joined, then the message',
      );
    });

    test('in a conversation that is not found, or of another bot, is ResourceNotFound', async () => {
      const other = await createTestBot(t, unique('other'));
      const { conversation } = await other.client.createConversation({ channel: 'channel', tags: {} });
      for (const conversationId of [conversation.id, 'conv_01J00000000000000000000000']) {
        await assert.rejects(
          bot.client.createMessage({
            conversationId,
            userId: bot.botId,
            type: 'text',
            payload: { text: 'lost?' },
            tags: {},
          }),
          ResourceNotFoundError,
        );
      }
      const { messages } = await other.client.listMessages({ conversationId: conversation.id });
      assert.deepEqual(messages, []);
    });
  });
}
