// A turn's end (src/domain/runtime/states.ts, writeAtTurnEnd): the states it changed and the end of its
// event, one statement on both stores (PostgreSQL's data-modifying CTE, SQLite's view `state_writes`).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestBot, statementsRun } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/**
 * Statements of a turn's end, by store: PostgreSQL's one; SQLite's insert and the begin and commit of its
 * group, alone on an idle server (six before `state_writes`: the upsert and the event's end, each its group).
 */
const STATEMENTS = { postgres: 1, sqlite: 3 };

for (const store of await testStores()) {
  describe(`a turn's end (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'ender');
    });
    after(() => t.close());

    test('stores its states, keeping an expiry, and ends its event, in one statement', async () => {
      const { client } = bot;
      const { conversation } = await client.createConversation({ channel: 'channel', tags: {} });
      const { user } = await client.createUser({ tags: {} });
      await client.setState({
        type: 'user',
        id: user.id,
        name: 'kept',
        payload: { n: 0 },
        expiry: 3_600_000,
      });
      const before = await client.getState({ type: 'user', id: user.id, name: 'kept' });
      const actor = { botId: bot.botId, workspaceId: t.workspaceId };
      const costs: number[] = [];
      // The server's polls may run statements meanwhile: the least is the cost. Five turn ends at least, up
      // to 20 while none cost only its own.
      for (let i = 0; i < 20 && (i < 5 || Math.min(...costs) > STATEMENTS[store.name]); i++) {
        const status = i % 2 === 0 ? 'processed' : 'ignored';
        const { event } = await client.createEvent({
          type: 'chat:custom',
          payload: {},
          conversationId: conversation.id,
          userId: user.id,
        });
        const start = await statementsRun(t);
        await t.server.domain.states.writeAtTurnEnd(
          actor,
          [
            { key: { type: 'conversation', id: conversation.id, name: 'dialog' }, payload: { step: i } },
            { key: { type: 'user', id: user.id, name: 'kept' }, payload: { n: i } },
          ],
          event.id,
          status,
        );
        costs.push((await statementsRun(t)) - start);
        assert.equal((await client.getEvent({ id: event.id })).event.status, status);
        const dialog = await client.getState({ type: 'conversation', id: conversation.id, name: 'dialog' });
        assert.deepEqual(dialog.state.payload, { step: i });
        const kept = await client.getState({ type: 'user', id: user.id, name: 'kept' });
        assert.deepEqual(kept.state.payload, { n: i });
        assert.equal(kept.state.expiresAt, before.state.expiresAt, 'the expiry stays');
        assert.equal(kept.state.id, before.state.id, 'the state is updated, not made again');
      }
      assert.equal(
        Math.min(...costs),
        STATEMENTS[store.name],
        `statements per turn end: ${costs.join(', ')}`,
      );
    });
  });
}
