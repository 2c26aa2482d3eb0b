import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResourceNotFoundError, UnauthorizedError } from '@botpress/client';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

for (const store of await testStores()) {
  describe(`Admin API: bot API keys (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    /** The key works on the Runtime API as its bot. */
    const runtime = (value: string, botId: string) =>
      t.client({ token: value, botId, workspaceId: undefined });

    test('createBotApiKey returns a bp_bak_ value once; listBotApiKeys lists the key without it', async () => {
      const c = t.client();
      const { bot } = await c.createBot({ name: 'keyed' });
      const key = await c.createBotApiKey({ botId: bot.id, note: 'ci' });
      assert.ok(key.value.startsWith('bp_bak_'), key.value);
      assert.ok(key.value.length - 'bp_bak_'.length >= 22, 'at least 128 random bits');
      assert.equal(key.note, 'ci');
      assert.equal(typeof key.id, 'string');
      assert.match(key.createdAt, ISO_UTC);

      const other = await c.createBotApiKey({ botId: bot.id });
      assert.notEqual(other.value, key.value);
      assert.equal(other.note, '');

      const listed = await c.listBotApiKeys({ botId: bot.id });
      assert.deepEqual(listed.baks.map((b) => b.id).sort(), [key.id, other.id].sort());
      assert.deepEqual(
        listed.baks.find((b) => b.id === key.id),
        { id: key.id, createdAt: key.createdAt, note: 'ci' },
      );
      const json = JSON.stringify(listed);
      assert.ok(!json.includes(key.value) && !json.includes(other.value), 'no key value is listed');

      // Keys are per bot.
      const { bot: second } = await c.createBot({ name: 'unkeyed' });
      assert.deepEqual((await c.listBotApiKeys({ botId: second.id })).baks, []);

      await runtime(key.value, bot.id).trackAnalytics({ name: 'works', count: 1 });
    });

    test('deleteBotApiKey revokes the key', async () => {
      const c = t.client();
      const { bot } = await c.createBot({ name: 'revoked' });
      const key = await c.createBotApiKey({ botId: bot.id, note: 'temporary' });
      const kept = await c.createBotApiKey({ botId: bot.id, note: 'kept' });
      await runtime(key.value, bot.id).trackAnalytics({ name: 'before', count: 1 });

      assert.deepEqual(await c.deleteBotApiKey({ id: key.id }), {});
      assert.deepEqual(
        (await c.listBotApiKeys({ botId: bot.id })).baks.map((b) => b.id),
        [kept.id],
      );
      await assert.rejects(
        runtime(key.value, bot.id).trackAnalytics({ name: 'after', count: 1 }),
        UnauthorizedError,
      );
      await runtime(kept.value, bot.id).trackAnalytics({ name: 'kept', count: 1 });
      await assert.rejects(c.deleteBotApiKey({ id: key.id }), ResourceNotFoundError);
    });

    test('deleting a bot revokes its keys', async () => {
      const c = t.client();
      const { bot } = await c.createBot({ name: 'gone' });
      const key = await c.createBotApiKey({ botId: bot.id });
      await c.deleteBot({ id: bot.id });
      await assert.rejects(
        runtime(key.value, bot.id).trackAnalytics({ name: 'x', count: 1 }),
        UnauthorizedError,
      );
      await assert.rejects(c.listBotApiKeys({ botId: bot.id }), ResourceNotFoundError);
    });

    test("keys of another workspace's bot cannot be created, listed or deleted", async () => {
      const a = t.client();
      const wsB = await a.createWorkspace({ name: 'B' });
      const b = t.client({ workspaceId: wsB.id });
      const { bot } = await b.createBot({ name: 'in-b' });
      const keyB = await b.createBotApiKey({ botId: bot.id, note: 'b' });

      await assert.rejects(a.createBotApiKey({ botId: bot.id }), ResourceNotFoundError);
      await assert.rejects(a.listBotApiKeys({ botId: bot.id }), ResourceNotFoundError);
      await assert.rejects(a.deleteBotApiKey({ id: keyB.id }), ResourceNotFoundError);
      await assert.rejects(
        a.createBotApiKey({ botId: 'bot_01NOSUCHBOT000000000000000' }),
        ResourceNotFoundError,
      );
      assert.deepEqual(
        (await b.listBotApiKeys({ botId: bot.id })).baks.map((k) => k.id),
        [keyB.id],
      );
      await runtime(keyB.value, bot.id).trackAnalytics({ name: 'still', count: 1 });
    });

    test('the store keeps only hashes of bot API keys', async () => {
      const c = t.client();
      const { bot } = await c.createBot({ name: 'hashed' });
      const values = [];
      for (let i = 0; i < 3; i++) values.push((await c.createBotApiKey({ botId: bot.id })).value);
      const rows = await t.server.store.db.selectFrom('bot_api_keys').selectAll().execute();
      const dump = JSON.stringify(rows);
      for (const value of values) {
        assert.ok(!dump.includes(value), 'a key value is stored');
        assert.ok(!dump.includes(value.slice('bp_bak_'.length)));
      }
      for (const row of rows) assert.match(row.token_hash, /^[0-9a-f]{64}$/);
    });
  });
}
