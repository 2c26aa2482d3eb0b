// A user's message through the Chat API is, on PostgreSQL, one statement with its event and its signal
// (src/domain/runtime/messages.ts, insertIncoming), its own transaction, then the event's claim. Both
// stores: the message, the bot's event and the listeners' signal are stored the same either way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { statementsRun } from './helpers/runtime.ts';
import { createChatBot } from './helpers/sse.ts';
import type { ChatBot } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/**
 * Statements of a message, by store. PostgreSQL: the lookup of the user, the conversation and the
 * participant in one statement (`Chat.admit`, then `turnParticipant`), the insert (its own transaction: no
 * begin, no commit) and the claim after it (this bot runs no code: the insert does not claim its event, see
 * chat-incoming-claim.test.ts). SQLite: that lookup, then the group's begin
 * and commit around the conversation's count, the message with its signal (one insert into the view
 * `message_writes`), and the event (which claims itself as it is stored, where the engine accepts it; the
 * transaction that opens its group takes no savepoint).
 */
// PostgreSQL's three leave room for one statement of the server's polls in the least of them (six before,
// with begin and commit; four before the user was read with the conversation).
const STATEMENTS = { postgres: 4, sqlite: 7 };
/** Messages sent, each measured. */
const SENDS = 20;
const sent = Array.from({ length: SENDS }, (_, i) => i);

for (const store of await testStores()) {
  describe(`a user's message through the Chat API (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: ChatBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createChatBot(t, 'incoming');
    });
    after(() => t.close());

    test('is stored with its event and its signal, in order', async () => {
      const client = await chat.Client.connect({ apiUrl: bot.webhookUrl });
      const { conversation } = await client.createConversation({});
      const costs: number[] = [];
      for (let i = 0; i < SENDS; i++) {
        const start = await statementsRun(t);
        await client.createMessage({
          conversationId: conversation.id,
          payload: { type: 'text', text: `hi ${i}` },
        });
        costs.push((await statementsRun(t)) - start);
      }
      // The least of them: other work of the server (its polls and sweeps, its caches' refreshes every
      // 2 s) runs statements meanwhile, the more so on a busy machine.
      assert.ok(Math.min(...costs) <= STATEMENTS[store.name], `statements per message: ${costs.join(', ')}`);

      const { events } = await bot.client.listEvents({ type: 'message_created' });
      assert.equal(events.length, SENDS);
      const conversationId = events[0]?.conversationId ?? '';
      const { messages } = await bot.client.listMessages({ conversationId });
      assert.deepEqual(
        messages.map((m) => [m.direction, m.payload]).reverse(),
        sent.map((i) => ['incoming', { text: `hi ${i}` }]),
      );
      for (const event of events) {
        const message = messages.find((m) => m.id === event.messageId);
        assert.ok(message, `the event's message ${event.messageId} is stored`);
        assert.equal(event.status, 'pending', 'a bot without code has no turn to run');
        assert.equal(event.userId, message.userId);
        assert.deepEqual(event.payload, { message: { ...message } });
      }
      const signals = await t.server.domain.log.since(
        conversationId,
        0,
        await t.server.domain.log.lastSeq(conversationId),
      );
      const created = signals
        .map((s) => JSON.parse(s.frame) as { type: string; data: { payload?: unknown } })
        .filter((f) => f.type === 'message_created');
      assert.deepEqual(
        created.map((f) => f.data.payload),
        sent.map((i) => ({ type: 'text', text: `hi ${i}` })),
      );
      assert.deepEqual(
        signals.map((s) => s.seq),
        signals.map((_, i) => i + 1),
        'the signals are numbered without gaps',
      );
    });
  });
}
