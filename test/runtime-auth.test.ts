import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ForbiddenError, PayloadTooLargeError, UnauthorizedError } from '@botpress/client';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const MB = 1024 * 1024;

interface ErrorBody {
  id: string;
  code: number;
  type: string;
  message: string;
}

async function assertErrorBody(res: Response, status: number, type: string): Promise<ErrorBody> {
  assert.equal(res.status, status);
  const body = (await res.json()) as ErrorBody;
  assert.equal(body.type, type);
  assert.equal(body.code, status);
  assert.match(body.id, /^err_\d{14}x[0-9A-F]{8}$/);
  assert.equal(typeof body.message, 'string');
  return body;
}

for (const store of await testStores()) {
  describe(`Runtime API authentication (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let accountId: string;
    let botA: string;
    let botB: string;
    let keyA: string;
    let keyB: string;
    before(async () => {
      t = await startTestServer(store);
      const c = t.client();
      accountId = (await c.getAccount({})).account.id;
      botA = (await c.createBot({ name: 'bot-a' })).bot.id;
      botB = (await c.createBot({ name: 'bot-b' })).bot.id;
      keyA = (await c.createBotApiKey({ botId: botA, note: 'a' })).value;
      keyB = (await c.createBotApiKey({ botId: botB, note: 'b' })).value;
    });
    after(() => t.close());

    const asBot = (token: string, botId: string | undefined) =>
      t.client({ token, botId, workspaceId: undefined });

    /** Analytics rows of a bot with this name: the only trace trackAnalytics leaves. */
    const tracked = async (botId: string, name: string) =>
      t.server.store.db
        .selectFrom('analytics')
        .select(['bot_id', 'name', 'count'])
        .where('bot_id', '=', botId)
        .where('name', '=', name)
        .execute();

    const postAnalytics = (headers: Record<string, string>, body: string) =>
      fetch(`${t.url}/v1/chat/analytics`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });

    test("a bot's own key works on the Runtime API", async () => {
      assert.deepEqual(await asBot(keyA, botA).trackAnalytics({ name: 'x', count: 1 }), {});
      assert.deepEqual(await tracked(botA, 'x'), [{ bot_id: botA, name: 'x', count: 1 }]);
    });

    test('the key of bot A with x-bot-id of bot B is Forbidden (403), and nothing is written for B', async () => {
      await assert.rejects(asBot(keyA, botB).trackAnalytics({ name: 'cross', count: 1 }), ForbiddenError);
      const res = await postAnalytics(
        { authorization: `Bearer ${keyA}`, 'x-bot-id': botB },
        JSON.stringify({ name: 'cross', count: 1 }),
      );
      await assertErrorBody(res, 403, 'Forbidden');
      assert.deepEqual(await tracked(botB, 'cross'), []);
      assert.deepEqual(await tracked(botA, 'cross'), []);
    });

    test('no x-bot-id, or no token, answers 401', async () => {
      const body = JSON.stringify({ name: 'headless', count: 1 });
      await assertErrorBody(
        await postAnalytics({ authorization: `Bearer ${keyA}` }, body),
        401,
        'Unauthorized',
      );
      await assertErrorBody(await postAnalytics({ 'x-bot-id': botA }, body), 401, 'Unauthorized');
      await assertErrorBody(
        await postAnalytics({ authorization: 'Bearer bp_bak_forged', 'x-bot-id': botA }, body),
        401,
        'Unauthorized',
      );
      await assert.rejects(
        asBot(keyA, undefined).trackAnalytics({ name: 'headless', count: 1 }),
        UnauthorizedError,
      );
      assert.deepEqual(await tracked(botA, 'headless'), []);
    });

    test("an owner's personal token acts as a bot of its workspace", async () => {
      await asBot(t.token, botB).trackAnalytics({ name: 'by-owner', count: 3 });
      assert.deepEqual(await tracked(botB, 'by-owner'), [{ bot_id: botB, name: 'by-owner', count: 3 }]);
      // But not as a bot that does not exist.
      await assert.rejects(
        asBot(t.token, 'bot_01NOSUCHBOT000000000000000').trackAnalytics({ name: 'ghost', count: 1 }),
        ForbiddenError,
      );
    });

    test("a personal token of an account outside the bot's workspace is Forbidden", async () => {
      const stranger = await t.server.domain.accounts.getOrCreateByEmail('stranger@example.com');
      const token = (await t.server.domain.accounts.createToken(stranger.id, 'test')).value;
      await assert.rejects(asBot(token, botA).trackAnalytics({ name: 'stranger', count: 1 }), ForbiddenError);
      // Even as the owner of a workspace of its own.
      const own = await t.client({ token, workspaceId: undefined }).createWorkspace({ name: 'own' });
      const ownBot = (await t.client({ token, workspaceId: own.id }).createBot({ name: 'own' })).bot.id;
      await assert.rejects(asBot(token, botA).trackAnalytics({ name: 'stranger', count: 1 }), ForbiddenError);
      await asBot(token, ownBot).trackAnalytics({ name: 'stranger', count: 1 });
      assert.deepEqual(await tracked(botA, 'stranger'), []);
      assert.equal((await tracked(ownBot, 'stranger')).length, 1);
      // And the owner of the first workspace cannot act as the stranger's bot.
      await assert.rejects(asBot(t.token, ownBot).trackAnalytics({ name: 'x', count: 1 }), ForbiddenError);
    });

    test('a bot key is refused on the Admin API, but for reading its own bot and changing its tags', async () => {
      const before = (await t.client().listBots({})).bots.length;
      await assert.rejects(t.client({ token: keyA }).listBots({}), UnauthorizedError);
      // What @botpress/cognitive reads of its bot (test/admin-auth.test.ts has the rest of this rule).
      const itself = t.client({ token: keyA, botId: botA });
      const { bot } = await itself.getBot({ id: botA });
      assert.equal(bot.id, botA);
      await assert.rejects(itself.getBot({ id: botB }), ForbiddenError);
      // The ADK runtime keeps its state in the bot's tags, with the bot's own key.
      const tagged = await itself.updateBot({ id: botA, tags: { phase: 'two', stale: 'yes' } });
      assert.equal(tagged.bot.tags.phase, 'two');
      await itself.updateBot({ id: botA, tags: { stale: null } });
      assert.deepEqual((await t.client().getBot({ id: botA })).bot.tags, { ...bot.tags, phase: 'two' });
      // Nothing else of itself, and nothing of another bot.
      await assert.rejects(itself.updateBot({ id: botA, name: 'renamed by its key' }), ForbiddenError);
      await assert.rejects(
        itself.updateBot({ id: botA, tags: { phase: 'three' }, code: 'export default {}' }),
        ForbiddenError,
      );
      await assert.rejects(itself.updateBot({ id: botB, tags: { phase: 'x' } }), ForbiddenError);
      const after = (await t.client().getBot({ id: botA })).bot;
      assert.equal(after.name, bot.name);
      assert.equal(after.tags.phase, 'two');
      assert.equal((await t.client().getBot({ id: botB })).bot.tags.phase, undefined);
      await assert.rejects(
        t.client({ token: keyA, workspaceId: undefined }).getAccount({}),
        UnauthorizedError,
      );
      await assert.rejects(
        t.client({ token: keyA, workspaceId: undefined }).createWorkspace({ name: 'by key' }),
        UnauthorizedError,
      );
      await assert.rejects(t.client({ token: keyA }).createBot({ name: 'by key' }), UnauthorizedError);
      assert.equal((await t.client().listBots({})).bots.length, before, 'no bot was created');
    });

    test('a deleted key is refused with UnauthorizedError', async () => {
      const c = t.client();
      const key = await c.createBotApiKey({ botId: botA, note: 'to delete' });
      await asBot(key.value, botA).trackAnalytics({ name: 'alive', count: 1 });
      await c.deleteBotApiKey({ id: key.id });
      await assert.rejects(
        asBot(key.value, botA).trackAnalytics({ name: 'dead', count: 1 }),
        UnauthorizedError,
      );
      assert.deepEqual(await tracked(botA, 'dead'), []);
    });

    test('a Runtime API body over 1 MB is refused with 413', async () => {
      const headers = { authorization: `Bearer ${keyA}`, 'x-bot-id': botA };
      const big = await postAnalytics(headers, JSON.stringify({ name: 'n'.repeat(MB + 1024), count: 1 }));
      await assertErrorBody(big, 413, 'PayloadTooLarge');
      await assert.rejects(
        asBot(keyA, botA).trackAnalytics({ name: 'm'.repeat(2 * MB), count: 1 }),
        PayloadTooLargeError,
      );
      // Just under the limit the body is read, and refused for what it says instead.
      const under = await postAnalytics(headers, JSON.stringify({ name: 'n'.repeat(MB - 1024), count: 1 }));
      await assertErrorBody(under, 400, 'InvalidPayload');
    });

    test('introspect tells the workspace, bot and user of a personal token and of a bot key', async () => {
      assert.deepEqual(await t.client({ workspaceId: undefined }).introspect({ botId: botA }), {
        workspaceId: t.workspaceId,
        botId: botA,
        userId: accountId,
      });
      const byKey = await asBot(keyB, botB).introspect({ botId: botB });
      assert.equal(byKey.workspaceId, t.workspaceId);
      assert.equal(byKey.botId, botB);
      assert.equal(typeof byKey.userId, 'string');
      assert.ok(byKey.userId.length > 0);
      assert.deepEqual(Object.keys(byKey).sort(), ['botId', 'userId', 'workspaceId']);

      await assert.rejects(asBot(keyB, botB).introspect({ botId: botA }), ForbiddenError);
      await assert.rejects(
        t.client({ token: 'bp_pat_nope', workspaceId: undefined }).introspect({ botId: botA }),
        UnauthorizedError,
      );
    });
  });
}
