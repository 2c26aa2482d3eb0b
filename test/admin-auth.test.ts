import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import {
  InvalidPayloadError,
  isApiError,
  PayloadTooLargeError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/client';
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

/** Asserts a raw response is an API error of this status and type, with the four keys the clients need. */
async function assertErrorBody(res: Response, status: number, type: string): Promise<ErrorBody> {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as ErrorBody;
  assert.equal(typeof body.id, 'string');
  assert.match(body.id, /^err_\d{14}x[0-9A-F]{8}$/, 'the hosted error id shape');
  assert.equal(body.code, status);
  assert.equal(body.type, type);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  return body;
}

for (const store of await testStores()) {
  describe(`Admin API: authentication and errors (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    const countBots = async (workspaceId: string): Promise<number> =>
      (
        await t.server.store.db
          .selectFrom('bots')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .execute()
      ).length;

    test('no token answers 401 Unauthorized with id, code, type and message', async () => {
      const res = await fetch(`${t.url}/v1/admin/bots`, { headers: { 'x-workspace-id': t.workspaceId } });
      await assertErrorBody(res, 401, 'Unauthorized');
      const notBearer = await fetch(`${t.url}/v1/admin/bots`, {
        headers: { authorization: `Basic ${t.token}`, 'x-workspace-id': t.workspaceId },
      });
      await assertErrorBody(notBearer, 401, 'Unauthorized');
      const post = await fetch(`${t.url}/v1/admin/bots`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-workspace-id': t.workspaceId },
        body: JSON.stringify({ name: 'sneaky' }),
      });
      await assertErrorBody(post, 401, 'Unauthorized');
      assert.equal(await countBots(t.workspaceId), 0, 'nothing was created');
    });

    test('an invalid token is refused with UnauthorizedError', async () => {
      await assert.rejects(t.client({ token: 'bp_pat_not-a-real-token' }).listBots({}), UnauthorizedError);
      await assert.rejects(t.client({ token: `${t.token}x` }).getAccount({}), UnauthorizedError);
      // The genuine token works, so the refusals are about the token.
      assert.ok(Array.isArray((await t.client().listBots({})).bots));
    });

    test('a missing x-workspace-id answers 401', async () => {
      const res = await fetch(`${t.url}/v1/admin/bots`, { headers: { authorization: `Bearer ${t.token}` } });
      await assertErrorBody(res, 401, 'Unauthorized');
      await assert.rejects(t.client({ workspaceId: undefined }).listBots({}), UnauthorizedError);
    });

    test('an x-workspace-id of a workspace the account is not in is refused with UnauthorizedError', async () => {
      const stranger = await t.server.domain.accounts.getOrCreateByEmail('stranger@example.com');
      const strangerToken = (await t.server.domain.accounts.createToken(stranger.id, 'test')).value;
      const theirs = await t.client({ token: strangerToken, workspaceId: undefined }).createWorkspace({
        name: 'not yours',
      });
      await t.client({ token: strangerToken, workspaceId: theirs.id }).createBot({ name: 'theirs' });

      await assert.rejects(t.client({ workspaceId: theirs.id }).listBots({}), UnauthorizedError);
      await assert.rejects(
        t.client({ workspaceId: theirs.id }).createBot({ name: 'intruder' }),
        UnauthorizedError,
      );
      await assert.rejects(
        t.client({ workspaceId: 'wkspace_01NOSUCHWORKSPACE0000000000' }).listBots({}),
        (err) => {
          assert.ok(err instanceof UnauthorizedError);
          assert.equal(err.code, 401);
          return true;
        },
      );
      assert.equal(await countBots(theirs.id), 1, 'the intruder created nothing');
    });

    test('a bot’s own key reads its bot with getBot, secrets left out, changes only its tags, and nothing else of the Admin API', async () => {
      const admin = t.client();
      const { bot } = await admin.createBot({ name: 'reads itself' });
      const { bot: other } = await admin.createBot({ name: 'another bot' });
      const { value } = await admin.createBotApiKey({ botId: bot.id });
      const asBot = t.client({ token: value, botId: bot.id, workspaceId: undefined });
      const { bot: itself } = await asBot.getBot({ id: bot.id });
      assert.equal(itself.id, bot.id);
      assert.equal(itself.signingSecret, '', 'a viewer’s rights: no signing secret');
      assert.equal(itself.integrations.chat?.configuration.encryptionKey, undefined);
      const forbidden = await asBot.getBot({ id: other.id }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(isApiError(forbidden));
      assert.equal(forbidden.code, 403);
      // Its tags, as the ADK runtime writes them (runtime-auth.test.ts has the rest); not its name.
      assert.equal((await asBot.updateBot({ id: bot.id, tags: { by: 'itself' } })).bot.tags.by, 'itself');
      const renamed = await asBot.updateBot({ id: bot.id, name: 'renamed' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(isApiError(renamed));
      assert.equal(renamed.code, 403);
      for (const attempt of [asBot.listBots({}), asBot.listBotApiKeys({ botId: bot.id })]) {
        const refused = await attempt.then(
          () => undefined,
          (err: unknown) => err,
        );
        assert.ok(refused instanceof UnauthorizedError, 'other Admin API routes still refuse a bot key');
      }
    });

    test('getBot of an unknown id is ResourceNotFoundError', async () => {
      await assert.rejects(t.client().getBot({ id: 'bot_01NOSUCHBOT000000000000000' }), (err) => {
        assert.ok(err instanceof ResourceNotFoundError);
        assert.ok(isApiError(err));
        assert.equal(err.code, 404);
        assert.match(err.id ?? '', /^err_/);
        return true;
      });
    });

    test("a bot of workspace B is not found with workspace A's header, and A's list never shows B's bots", async () => {
      const a = t.client();
      const wsB = await a.createWorkspace({ name: 'B' });
      const b = t.client({ workspaceId: wsB.id });
      const inA = (await a.createBot({ name: 'in-a' })).bot;
      const inB = await Promise.all(
        [1, 2, 3].map(async (i) => (await b.createBot({ name: `in-b-${i}` })).bot),
      );

      for (const bot of inB) {
        await assert.rejects(a.getBot({ id: bot.id }), ResourceNotFoundError);
        await assert.rejects(a.updateBot({ id: bot.id, name: 'hijacked' }), ResourceNotFoundError);
        await assert.rejects(a.deleteBot({ id: bot.id }), ResourceNotFoundError);
        const still = (await b.getBot({ id: bot.id })).bot;
        assert.equal(still.name, bot.name, 'B’s bot is untouched');
      }
      await assert.rejects(b.getBot({ id: inA.id }), ResourceNotFoundError);

      const listedA = (await a.list.bots({}).collect()).map((x) => x.id);
      assert.ok(listedA.includes(inA.id));
      for (const bot of inB) assert.ok(!listedA.includes(bot.id), `A's list shows B's bot ${bot.id}`);
      const listedB = (await b.list.bots({}).collect()).map((x) => x.id);
      assert.deepEqual(listedB.sort(), inB.map((x) => x.id).sort());
    });

    test('a createBot body over 50 MB is refused with 413 PayloadTooLarge; a few MB are accepted', async () => {
      const before = await countBots(t.workspaceId);
      const huge = JSON.stringify({ name: 'huge', description: 'a'.repeat(51 * MB) });
      const res = await fetch(`${t.url}/v1/admin/bots`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.token}`,
          'x-workspace-id': t.workspaceId,
          'content-type': 'application/json',
        },
        body: huge,
      });
      await assertErrorBody(res, 413, 'PayloadTooLarge');

      await assert.rejects(
        t.client().createBot({ name: 'huge', description: 'b'.repeat(51 * MB) }),
        PayloadTooLargeError,
      );
      assert.equal(await countBots(t.workspaceId), before, 'nothing was created');

      // The Admin API's limit is 50 MB, not the Runtime API's 1 MB.
      const big = await t.client().createBot({ name: 'big', description: 'c'.repeat(2 * MB) });
      assert.equal(big.bot.description?.length, 2 * MB);
    });

    test('a sender always reads the 413 of an oversized body (the server reads the rest, it does not reset)', async () => {
      const body = Buffer.alloc(51 * MB, 0x61);
      const url = new URL(`${t.url}/v1/admin/bots`);
      const outcomes: string[] = [];
      for (let i = 0; i < 10; i++) {
        outcomes.push(
          await new Promise<string>((resolve) => {
            const req = http.request(
              {
                host: url.hostname,
                port: url.port,
                path: url.pathname,
                method: 'POST',
                headers: {
                  authorization: `Bearer ${t.token}`,
                  'x-workspace-id': t.workspaceId,
                  'content-type': 'application/json',
                  'content-length': body.length,
                },
              },
              (res) => {
                res.resume();
                res.on('end', () => resolve(String(res.statusCode)));
              },
            );
            req.on('error', (err) => resolve(err.message));
            req.end(body);
          }),
        );
      }
      assert.deepEqual(
        outcomes,
        Array.from({ length: 10 }, () => '413'),
      );
    });

    test('malformed JSON is refused with 400 InvalidPayload', async () => {
      const before = await countBots(t.workspaceId);
      const res = await fetch(`${t.url}/v1/admin/bots`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.token}`,
          'x-workspace-id': t.workspaceId,
          'content-type': 'application/json',
        },
        body: '{"name": "half',
      });
      await assertErrorBody(res, 400, 'InvalidPayload');
      assert.equal(await countBots(t.workspaceId), before);
    });

    const wrongTypes: [string, Record<string, unknown>][] = [
      ['name', { name: 5 }],
      ['name', { name: ['a', 'b'] }],
      ['dev', { dev: 'yes' }],
      ['tags', { tags: { env: 5 } }],
    ];
    for (const [field, body] of wrongTypes) {
      test(`createBot with ${JSON.stringify(body)} is InvalidPayloadError naming ${field}, and writes nothing`, async () => {
        const c = t.client();
        const before = await countBots(t.workspaceId);
        await assert.rejects(c.createBot(body), (err) => {
          assert.ok(err instanceof InvalidPayloadError, `expected InvalidPayloadError, got ${String(err)}`);
          assert.match(err.message, new RegExp(field), `the message names ${field}: ${err.message}`);
          return true;
        });
        assert.equal(await countBots(t.workspaceId), before, 'no bot was created from an invalid body');
      });
    }

    test('updateBot with name: 7 is InvalidPayloadError naming the field, and the bot is unchanged', async () => {
      const c = t.client();
      const { bot } = await c.createBot({ name: 'typed' });
      await assert.rejects(c.updateBot({ id: bot.id, name: 7 as unknown as string }), (err) => {
        assert.ok(err instanceof InvalidPayloadError, `expected InvalidPayloadError, got ${String(err)}`);
        assert.match(err.message, /name/);
        return true;
      });
      assert.deepEqual((await c.getBot({ id: bot.id })).bot, bot);
    });

    test('an unknown route answers 404 ResourceNotFound with an error body', async () => {
      const res = await fetch(`${t.url}/v1/admin/no-such-thing`, {
        headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId },
      });
      const body = await assertErrorBody(res, 404, 'ResourceNotFound');
      assert.match(body.message, /no-such-thing/);
      const unauthenticated = await fetch(`${t.url}/v1/nowhere`, { method: 'POST' });
      await assertErrorBody(unauthenticated, 404, 'ResourceNotFound');
    });
  });
}
