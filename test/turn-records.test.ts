// What a turn reads before it runs (src/domain/runtime/turn-records.ts): the event's records with their
// tags and the states of its variables, the same on both stores, in one statement.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestBot, statementsRun } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`a turn's records (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let other: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'reader');
      other = await createTestBot(t, 'other');
    });
    after(() => t.close());

    test('are read with their tags and live states, as each read alone gives them', async () => {
      const { client } = bot;
      const { user } = await client.createUser({ tags: {}, name: 'Ada' });
      const { conversation } = await client.createConversation({ channel: 'channel', tags: {} });
      const { message } = await client.createMessage({
        conversationId: conversation.id,
        userId: user.id,
        type: 'text',
        payload: { text: 'hello' },
        tags: {},
      });
      await client.setState({ type: 'user', id: user.id, name: 'profile', payload: { likes: 'tea' } });
      await client.setState({
        type: 'conversation',
        id: conversation.id,
        name: 'gone',
        payload: { soon: true },
        expiry: 1,
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const actor = { botId: bot.botId, workspaceId: t.workspaceId };
      const { domain } = t.server;
      const ids = {
        messageId: message.id,
        conversationId: conversation.id,
        userId: user.id,
        stateKeys: [
          { type: 'user' as const, id: user.id, name: 'profile' },
          { type: 'conversation' as const, id: conversation.id, name: 'gone' },
          { type: 'bot' as const, id: bot.botId, name: 'none' },
        ],
      };
      const costs: number[] = [];
      // The server's polls may run statements meanwhile: the least is the cost. Five reads at least, up to
      // 20 while none cost only its own.
      for (let i = 0; i < 20 && (i < 5 || Math.min(...costs) > 1); i++) {
        const start = await statementsRun(t);
        const read = await domain.turnRecords.read(actor, ids);
        costs.push((await statementsRun(t)) - start);
        assert.deepEqual(read.message, await domain.messages.get(actor, message.id));
        assert.deepEqual(read.conversation, await domain.conversations.get(actor, conversation.id));
        assert.deepEqual(read.user, await domain.users.get(actor, user.id));
        assert.deepEqual([...read.states], [[`user/${user.id}/profile`, { likes: 'tea' }]]);
      }
      assert.equal(Math.min(...costs), 1, `statements: ${costs.join(', ')}`);

      // Another bot's records are none of this bot's, read by a statement of either shape.
      const none = { message: undefined, conversation: undefined, user: undefined, states: new Map() };
      const otherActor = { botId: other.botId, workspaceId: t.workspaceId };
      assert.deepEqual(await domain.turnRecords.read(otherActor, { ...ids, stateKeys: [] }), none);
      assert.deepEqual(await domain.turnRecords.read(otherActor, ids), none);
      // A statement kept for a shape reads what each turn names: another user, and the first one again.
      const { user: second } = await client.createUser({ tags: {}, name: 'Grace' });
      await client.setState({ type: 'user', id: second.id, name: 'profile', payload: { likes: 'milk' } });
      const secondIds = {
        ...ids,
        userId: second.id,
        stateKeys: [{ type: 'user' as const, id: second.id, name: 'profile' }, ...ids.stateKeys.slice(1)],
      };
      const read = await domain.turnRecords.read(actor, secondIds);
      assert.deepEqual(read.user, await domain.users.get(actor, second.id));
      assert.deepEqual([...read.states], [[`user/${second.id}/profile`, { likes: 'milk' }]]);
      const again = await domain.turnRecords.read(actor, { ...ids, stateKeys: [] });
      assert.deepEqual(again.user, await domain.users.get(actor, user.id));
      assert.deepEqual(await domain.turnRecords.read(actor, { stateKeys: [] }), none);
    });
  });
}
