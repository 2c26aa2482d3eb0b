// A turn's read of its states (src/domain/runtime/states.ts, readManyQuery): the keys it names, each
// looked up by the states' unique key, however many states the bot has.
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { after, before, describe, test } from 'node:test';
import type { StateKey } from '../src/domain/runtime/states.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`a turn's read of its states (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let keys: StateKey[];
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'reader');
      const users = await Promise.all([1, 2, 3].map(() => bot.client.createUser({ tags: {} })));
      for (const [i, { user }] of users.entries()) {
        await bot.client.setState({ type: 'user', id: user.id, name: 'variables', payload: { n: i } });
      }
      const [first, , third] = users.map(({ user }) => user.id);
      assert.ok(first && third);
      keys = [
        { type: 'user', id: first, name: 'variables' },
        { type: 'user', id: third, name: 'variables' },
        { type: 'user', id: third, name: 'never-set' },
        { type: 'bot', id: bot.botId, name: 'variables' },
      ];
    });
    after(() => t.close());

    test('answers the states of the keys it names, and no other of the bot’s', async () => {
      const actor = { botId: bot.botId, workspaceId: t.workspaceId };
      const found = await t.server.domain.states.readMany(actor, keys);
      assert.deepEqual([...found].sort(), [
        [`user/${keys[0]?.id}/variables`, { n: 0 }],
        [`user/${keys[1]?.id}/variables`, { n: 2 }],
      ]);
    });

    // SQLite plans an OR by its terms: with the bot outside them it walked every state of the bot, and a
    // turn's read grew with the bot's users (530 µs a turn at 2,000 of them, in the bench's held load).
    test('looks each key up in the unique index', { skip: store.name !== 'sqlite' }, async () => {
      const compiled = t.server.domain.states.readManyQuery(bot.botId, keys).compile();
      const { rows } = await t.server.store.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      );
      const searches = rows.map((r) => r.detail).filter((d) => d.includes('SEARCH'));
      assert.equal(searches.length, keys.length, searches.join('\n'));
      for (const search of searches)
        assert.match(search, /bot_id=\? AND type=\? AND resource_id=\? AND name=\?/);
    });
  });
}
