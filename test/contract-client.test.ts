// The client made from the contract (src/contract/client.ts) against a real server: its inputs land in
// the parts the specs declare (path parameters URL-encoded, maps as `key.k=v`, arrays as repeated keys,
// the body) and its lists are walked whole; what the official client wrote, it reads back alike.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { APIS } from '../src/contract/apis.ts';
import { collect } from '../src/contract/client.ts';
import { HEADERS } from '../src/contract/headers.ts';
import { parleyClient } from './helpers/parley-client.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`the contract's client (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let runtime: ReturnType<typeof runtimeOf>;
    const runtimeOf = (b: TestBot) =>
      parleyClient(t.url, APIS.runtime, {
        [HEADERS.authorization]: `Bearer ${b.key}`,
        [HEADERS.botId]: b.botId,
      });

    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'contract-client');
      runtime = runtimeOf(bot);
    });
    after(() => t.close());

    test('a path parameter with reserved characters names the same record', async () => {
      const { user } = await bot.client.createUser({ tags: {} });
      const name = 'a name/with?reserved#chars';
      await bot.client.setState({ type: 'user', id: user.id, name, payload: { n: 1 } });
      const { state } = await runtime.getState({ type: 'user', id: user.id, name });
      assert.deepEqual(state.payload, { n: 1 });
      assert.equal(state.name, name);
    });

    test('a map and an array in the query filter as the official client does', async () => {
      const { user } = await bot.client.createUser({ tags: {} });
      const made = [];
      for (const topic of ['a', 'b', 'a']) {
        const { conversation } = await bot.client.createConversation({ channel: 'channel', tags: { topic } });
        made.push(conversation.id);
      }
      await bot.client.addParticipant({ id: made[1] ?? '', userId: user.id });
      const byTag = await runtime.listConversations({ tags: { topic: 'a' } });
      assert.deepEqual(byTag.conversations.map((c) => c.id).sort(), [made[0], made[2]].sort());
      const official = await bot.client.listConversations({ tags: { topic: 'a' } });
      assert.deepEqual(
        byTag.conversations.map((c) => c.id).sort(),
        official.conversations.map((c) => c.id).sort(),
      );
      const byParticipant = await runtime.listConversations({ participantIds: [user.id] });
      assert.deepEqual(
        byParticipant.conversations.map((c) => c.id),
        [made[1]],
      );
    });

    test('a body is sent as declared, and a list is collected page after page', async () => {
      for (let i = 0; i < 3; i++) await runtime.createUser({ name: `paged ${i}`, tags: { paged: 'yes' } });
      const { items, complete } = await collect(runtime.listUsers, 'users', {
        tags: { paged: 'yes' },
        pageSize: 1,
      });
      assert.equal(complete, true);
      assert.deepEqual(items.map((u) => u.name).sort(), ['paged 0', 'paged 1', 'paged 2']);
      const partial = await collect(runtime.listUsers, 'users', { tags: { paged: 'yes' }, pageSize: 1 }, 2);
      assert.deepEqual([partial.items.length, partial.complete], [2, false]);
    });
  });
}
