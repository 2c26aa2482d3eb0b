import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import type { Client } from '@botpress/client';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { rejectsWith } from './helpers/runtime.ts';
import { whileChangedOutside } from './helpers/held-rows.ts';
import { testStores } from './helpers/stores.ts';
import { sandboxSkip } from './helpers/sandbox.ts';
import { loadPackage } from '../src/package/load.ts';

const noSandbox = await sandboxSkip();
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

for (const store of await testStores()) {
  describe(`Admin API: bots (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store);
    });
    after(() => t.close());

    /** A client in a workspace of its own, so each test counts and orders only its own bots. */
    async function freshWorkspace(name: string): Promise<Client> {
      const ws = await t.client().createWorkspace({ name });
      return t.client({ workspaceId: ws.id });
    }

    async function createBots(c: Client, n: number, prefix: string): Promise<string[]> {
      const ids: string[] = [];
      // One after another, so creation order is the createdAt order.
      for (let i = 0; i < n; i++) ids.push((await c.createBot({ name: `${prefix}-${i}` })).bot.id);
      return ids;
    }

    /** Walks listBots page by page with the given query, returning each page's ids. */
    async function pages(c: Client, query: Parameters<Client['listBots']>[0]): Promise<string[][]> {
      const out: string[][] = [];
      let nextToken: string | undefined;
      do {
        const res = await c.listBots({ ...query, nextToken });
        out.push(res.bots.map((b) => b.id));
        nextToken = res.meta.nextToken;
      } while (nextToken);
      return out;
    }

    test('createBot, getBot, updateBot and deleteBot round trip', async () => {
      const c = await freshWorkspace('round trip');
      const { bot } = await c.createBot({
        name: 'round-trip',
        tags: { env: 'prod', team: 'core' },
        configuration: { data: { greeting: 'hi' }, schema: { type: 'object' } },
      });
      assert.equal(typeof bot.id, 'string');
      assert.ok(bot.id.length >= 28 && bot.id.length <= 36, `id length ${bot.id.length}`);
      assert.equal(bot.name, 'round-trip');
      assert.match(bot.createdAt, ISO_UTC);
      assert.match(bot.updatedAt, ISO_UTC);
      assert.equal(bot.updatedAt, bot.createdAt);
      assert.equal(bot.deployedAt, undefined, 'no code uploaded: not deployed');
      assert.deepEqual(bot.tags, { env: 'prod', team: 'core' });
      assert.equal(bot.dev, false);
      assert.equal(bot.status, 'active');
      assert.deepEqual(bot.configuration, { data: { greeting: 'hi' }, schema: { type: 'object' } });
      // Every bot has the built-in chat channel, reachable at its webhook URL, and the built-in LLM
      // integration (not registered here: this server has no model provider).
      assert.deepEqual(Object.keys(bot.integrations), ['chat', 'llm']);
      assert.equal(bot.integrations.llm?.status, 'registration_failed');
      const chat = bot.integrations.chat;
      assert.equal(chat?.name, 'chat');
      assert.equal(chat?.enabled, true);
      assert.match(chat?.webhookId ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(chat?.webhookUrl, `${t.url}/chat/${chat?.webhookId}`);
      assert.deepEqual(bot.secrets, []);

      const fetched = (await c.getBot({ id: bot.id })).bot;
      assert.deepEqual(fetched, bot);

      await sleep(5);
      const updated = (await c.updateBot({ id: bot.id, name: 'renamed', tags: { env: 'staging' } })).bot;
      assert.equal(updated.id, bot.id);
      assert.equal(updated.name, 'renamed');
      assert.deepEqual(updated.tags, { env: 'staging', team: 'core' }, 'a string replaces, others stay');
      assert.equal(updated.createdAt, bot.createdAt);
      assert.ok(
        updated.updatedAt > bot.updatedAt,
        `updatedAt moved: ${bot.updatedAt} -> ${updated.updatedAt}`,
      );
      assert.deepEqual(updated.configuration, bot.configuration, 'untouched fields stay');
      assert.deepEqual((await c.getBot({ id: bot.id })).bot, updated);

      assert.deepEqual(await c.deleteBot({ id: bot.id }), {});
      await assert.rejects(c.getBot({ id: bot.id }), ResourceNotFoundError);
      assert.deepEqual((await c.listBots({})).bots, []);
      await assert.rejects(c.deleteBot({ id: bot.id }), ResourceNotFoundError);
    });

    test(
      'an update never overwrites what another committed while it ran',
      { skip: store.name === 'postgres' ? false : 'the row is changed from outside with PostgreSQL' },
      async () => {
        const ws = await t.client().createWorkspace({ name: 'raced' });
        const c = t.client({ workspaceId: ws.id });
        const { bot } = await c.createBot({ name: 'raced', secrets: { A: 'x' } });
        assert.ok(t.settings.databaseUrl);
        // Another server's update of the bot, committed while this one runs.
        const { bot: updated } = await whileChangedOutside(
          t.settings.databaseUrl,
          `update bots set secrets = '{"A":"x","OUTSIDE":"o"}', updated_at = $2 where id = $1`,
          [bot.id, new Date().toISOString()],
          () => c.updateBot({ id: bot.id, secrets: { INSIDE: 'i' } }),
        );
        assert.deepEqual([...updated.secrets].sort(), ['A', 'INSIDE', 'OUTSIDE']);
        assert.deepEqual([...(await c.getBot({ id: bot.id })).bot.secrets].sort(), [
          'A',
          'INSIDE',
          'OUTSIDE',
        ]);
      },
    );

    test('secrets are returned as names only, never as values', async () => {
      const ws = await t.client().createWorkspace({ name: 'secrets' });
      const c = t.client({ workspaceId: ws.id });
      const res = await c.createBot({ name: 'with-secrets', secrets: { A: 'x' } });
      assert.deepEqual(res.bot.secrets, ['A']);
      assert.ok(!JSON.stringify(res).includes('"x"'), 'the secret value is not in the createBot response');

      const got = await c.getBot({ id: res.bot.id });
      assert.deepEqual(got.bot.secrets, ['A']);
      assert.ok(!JSON.stringify(got).includes('"x"'), 'the secret value is not in the getBot response');

      const value = 'sekret-value-7f3a9c';
      const upd = await c.updateBot({ id: res.bot.id, secrets: { B: value } });
      assert.deepEqual([...upd.bot.secrets].sort(), ['A', 'B']);
      assert.ok(!JSON.stringify(upd).includes(value));

      const raw = await fetch(`${t.url}/v1/admin/bots/${res.bot.id}`, {
        headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': ws.id },
      });
      assert.equal(raw.status, 200);
      const text = await raw.text();
      assert.ok(!text.includes(value) && !text.includes('"x"'), 'no secret value on the wire');
    });

    test('updateBot with a null tag deletes that tag', async () => {
      const c = await freshWorkspace('null tag');
      const { bot } = await c.createBot({ name: 'tagged', tags: { env: 'prod', team: 'core' } });
      const updated = (await c.updateBot({ id: bot.id, tags: { team: null } })).bot;
      assert.deepEqual(updated.tags, { env: 'prod' });
      assert.deepEqual((await c.getBot({ id: bot.id })).bot.tags, { env: 'prod' });
      assert.deepEqual(
        (await c.listBots({ tags: { team: '' } })).bots,
        [],
        'the tag is gone, not set to an empty string',
      );
    });

    test('updateBot with a null secret deletes that secret', async () => {
      const c = await freshWorkspace('null secret');
      const { bot } = await c.createBot({ name: 'secretive', secrets: { A: 'x', B: 'y' } });
      assert.deepEqual([...bot.secrets].sort(), ['A', 'B']);
      const updated = (await c.updateBot({ id: bot.id, secrets: { A: null } })).bot;
      assert.deepEqual(updated.secrets, ['B']);
      assert.deepEqual((await c.getBot({ id: bot.id })).bot.secrets, ['B']);
    });

    test('code Parley cannot run is refused with the reason, and deploys nothing', async () => {
      const c = await freshWorkspace('unrunnable');
      const NOT_RUNNABLE = /neither a Parley bot package .* nor a CommonJS bundle built by `bp build`/;
      await rejectsWith(
        c.createBot({ name: 'esm', code: 'export default {}' }),
        InvalidPayloadError,
        NOT_RUNNABLE,
      );
      const { bot } = await c.createBot({ name: 'later' });
      for (const code of ['export default {}', 'module.exports = {', '{"not":"a package"}', '{ broken']) {
        await rejectsWith(c.updateBot({ id: bot.id, code }), InvalidPayloadError, NOT_RUNNABLE);
      }
      // A document that says it is a Parley package is held to the package format.
      await rejectsWith(
        c.updateBot({ id: bot.id, code: JSON.stringify({ parley: 1, manifest: {} }) }),
        InvalidPayloadError,
        /^code is not a valid Parley bot package: .*must have required property/,
      );
      const refused = (await c.getBot({ id: bot.id })).bot;
      assert.equal(refused.deployedAt, undefined);
      assert.equal((refused as { runtime?: string }).runtime, undefined, 'no code, no runtime');
    });

    test(
      'getBot says which runtime runs the code: a Parley package, or an SDK bundle',
      { skip: noSandbox },
      async () => {
        const c = await freshWorkspace('runtimes');
        const pkg = JSON.stringify(await loadPackage('examples/echo-bot'));
        const native = (await c.createBot({ name: 'native', code: pkg })).bot;
        assert.equal((native as { runtime?: string }).runtime, 'parley');
        const sdk = (
          await c.createBot({ name: 'sdk', code: 'module.exports = { handler: async () => ({}) }' })
        ).bot;
        assert.equal((sdk as { runtime?: string }).runtime, 'botpress-sdk');
        const switched = (await c.updateBot({ id: sdk.id, code: pkg })).bot;
        assert.equal((switched as { runtime?: string }).runtime, 'parley');
      },
    );

    test('deployedAt is set when code is uploaded, by createBot or updateBot', async () => {
      const c = await freshWorkspace('deploy');
      const code = JSON.stringify(await loadPackage('examples/echo-bot'));
      const withCode = (await c.createBot({ name: 'deployed', code })).bot;
      assert.match(withCode.deployedAt ?? '', ISO_UTC);
      assert.ok((withCode.deployedAt ?? '') >= withCode.createdAt);
      assert.equal((await c.getBot({ id: withCode.id })).bot.deployedAt, withCode.deployedAt);

      const plain = (await c.createBot({ name: 'later' })).bot;
      assert.equal(plain.deployedAt, undefined);
      const renamed = (await c.updateBot({ id: plain.id, name: 'later-renamed' })).bot;
      assert.equal(renamed.deployedAt, undefined, 'an update without code does not deploy');

      await sleep(5);
      const deployed = (await c.updateBot({ id: plain.id, code })).bot;
      assert.match(deployed.deployedAt ?? '', ISO_UTC);
      assert.ok((deployed.deployedAt ?? '') > plain.createdAt, 'deployedAt is the time of the upload');
      assert.equal((await c.getBot({ id: plain.id })).bot.deployedAt, deployed.deployedAt);

      const summary = (await c.listBots({})).bots.find((b) => b.id === plain.id);
      assert.equal(summary?.deployedAt, deployed.deployedAt, 'listBots carries deployedAt too');
    });

    test('updateBot with url: null removes the url and does not deploy', async () => {
      const c = await freshWorkspace('url null');
      const { bot } = await c.createBot({ name: 'undeployed' });
      assert.equal(bot.deployedAt, undefined);
      const updated = (await c.updateBot({ id: bot.id, url: null })).bot;
      assert.equal(updated.deployedAt, undefined, 'removing a url uploads nothing');
      assert.equal((await c.getBot({ id: bot.id })).bot.deployedAt, undefined);
    });

    test('listBots: 45 bots in pages of 20 are 3 pages (20, 20, 5) with every bot once', async () => {
      const c = await freshWorkspace('pages');
      const ids = await Promise.all(
        Array.from({ length: 45 }, async (_, i) => (await c.createBot({ name: `p-${i}` })).bot.id),
      );
      const walk = await pages(c, { pageSize: 20 });
      assert.deepEqual(
        walk.map((p) => p.length),
        [20, 20, 5],
      );
      const seen = walk.flat();
      assert.equal(new Set(seen).size, 45, 'no bot twice');
      assert.deepEqual([...seen].sort(), [...ids].sort());

      const collected = await c.list.bots({}).collect();
      assert.equal(collected.length, 45);
      assert.deepEqual(collected.map((b) => b.id).sort(), [...ids].sort());

      const first = await c.listBots({});
      assert.equal(first.bots.length, 20, 'default pageSize is 20');
      assert.equal(typeof first.meta.nextToken, 'string');

      const all = await c.listBots({ pageSize: 100 });
      assert.equal(all.bots.length, 45);
      assert.equal(all.meta.nextToken, undefined, 'no next page after the last');

      await assert.rejects(c.listBots({ pageSize: 101 }), InvalidPayloadError);
      await assert.rejects(c.listBots({ pageSize: 0 }), InvalidPayloadError);
    });

    test('listBots sorts by createdAt and updatedAt in both directions', async () => {
      const c = await freshWorkspace('sort');
      const ids = await createBots(c, 6, 'sort');
      const asc = (await c.listBots({ sortField: 'createdAt', sortDirection: 'asc' })).bots.map((b) => b.id);
      const desc = (await c.listBots({ sortField: 'createdAt', sortDirection: 'desc' })).bots.map(
        (b) => b.id,
      );
      assert.deepEqual(asc, ids, 'ascending is creation order');
      assert.deepEqual(desc, [...ids].reverse(), 'descending is the reverse');
      assert.deepEqual(
        (await c.listBots({})).bots.map((b) => b.id),
        desc,
        'the default order is newest first',
      );
      // Small pages give the same order.
      assert.deepEqual((await pages(c, { sortDirection: 'asc', pageSize: 4 })).flat(), ids);

      const oldest = ids[0] ?? assert.fail('no bot');
      await sleep(5);
      await c.updateBot({ id: oldest, name: 'touched' });
      const byUpdateDesc = (await c.listBots({ sortField: 'updatedAt', sortDirection: 'desc' })).bots.map(
        (b) => b.id,
      );
      assert.equal(byUpdateDesc[0], oldest, 'the bot updated last comes first by updatedAt desc');
      assert.deepEqual(byUpdateDesc.slice(1), [...ids.slice(1)].reverse());
      const byUpdateAsc = (await c.listBots({ sortField: 'updatedAt', sortDirection: 'asc' })).bots.map(
        (b) => b.id,
      );
      assert.deepEqual(byUpdateAsc, [...ids.slice(1), oldest]);
      assert.deepEqual(
        (await pages(c, { sortField: 'updatedAt', sortDirection: 'asc', pageSize: 2 })).flat(),
        byUpdateAsc,
      );
      // The createdAt order does not move with the update.
      assert.deepEqual(
        (await c.listBots({ sortField: 'createdAt', sortDirection: 'asc' })).bots.map((b) => b.id),
        ids,
      );
    });

    test('listBots filters by tags', async () => {
      const c = await freshWorkspace('tags');
      const prodA = (await c.createBot({ name: 'prod-a', tags: { env: 'prod' } })).bot.id;
      const prodB = (await c.createBot({ name: 'prod-b', tags: { env: 'prod', 'chat:team': 'blue' } })).bot
        .id;
      const dev = (await c.createBot({ name: 'staging', tags: { env: 'staging', 'chat:team': 'blue' } })).bot
        .id;
      await c.createBot({ name: 'untagged' });

      const prod = (await c.listBots({ tags: { env: 'prod' } })).bots;
      assert.deepEqual(prod.map((b) => b.id).sort(), [prodA, prodB].sort());
      assert.ok(prod.every((b) => b.tags.env === 'prod'));
      assert.deepEqual(
        (await c.listBots({ tags: { env: 'prod', 'chat:team': 'blue' } })).bots.map((b) => b.id),
        [prodB],
        'every tag must match',
      );
      assert.deepEqual(
        (await c.listBots({ tags: { 'chat:team': 'blue' } })).bots.map((b) => b.id).sort(),
        [prodB, dev].sort(),
      );
      assert.deepEqual((await c.listBots({ tags: { env: 'nowhere' } })).bots, []);

      // A tag removed by updateBot no longer matches.
      await c.updateBot({ id: prodA, tags: { env: null } });
      assert.deepEqual(
        (await c.listBots({ tags: { env: 'prod' } })).bots.map((b) => b.id),
        [prodB],
      );
    });

    test('listBots lists development bots only with dev: true', async () => {
      const c = await freshWorkspace('dev');
      const prod = (await c.createBot({ name: 'prod' })).bot;
      const dev = (await c.createBot({ name: 'dev', dev: true })).bot;
      assert.equal(dev.dev, true);
      assert.equal((await c.getBot({ id: dev.id })).bot.dev, true);
      assert.equal(prod.dev, false);

      assert.deepEqual(
        (await c.listBots({})).bots.map((b) => b.id),
        [prod.id],
        'without dev, production bots only',
      );
      assert.deepEqual(
        (await c.listBots({ dev: true })).bots.map((b) => b.id),
        [dev.id],
        'dev: true gives development bots only',
      );
      assert.deepEqual(
        (await c.listBots({ dev: false })).bots.map((b) => b.id),
        [prod.id],
      );
    });

    for (const sortDirection of ['asc', 'desc'] as const) {
      test(`a listBots walk (${sortDirection}) serves every bot that exists throughout exactly once, while others come and go`, async () => {
        const c = await freshWorkspace(`walk ${sortDirection}`);
        const originals: string[] = [];
        const extras: string[] = [];
        // Interleave bots that will be deleted between the ones that stay.
        for (let i = 0; i < 30; i++) {
          originals.push((await c.createBot({ name: `orig-${i}` })).bot.id);
          if (i % 3 === 1) extras.push((await c.createBot({ name: `extra-${i}` })).bot.id);
        }
        const seen: string[] = [];
        let nextToken: string | undefined;
        let round = 0;
        do {
          const res = await c.listBots({ pageSize: 7, sortDirection, nextToken });
          assert.ok(res.bots.length <= 7);
          seen.push(...res.bots.map((b) => b.id));
          nextToken = res.meta.nextToken;
          // Between pages: two new bots, and two bots that are not originals go (one early, one recent).
          for (let k = 0; k < 2; k++) extras.push((await c.createBot({ name: `new-${round}-${k}` })).bot.id);
          for (const victim of [extras.shift(), extras.pop()]) {
            if (victim) await c.deleteBot({ id: victim });
          }
          round++;
          assert.ok(round < 50, 'the walk ends');
        } while (nextToken);

        assert.equal(new Set(seen).size, seen.length, 'no bot is served twice');
        for (const id of originals) {
          assert.equal(seen.filter((s) => s === id).length, 1, `original ${id} served exactly once`);
        }
        // The originals keep their relative order.
        const order = seen.filter((s) => originals.includes(s));
        assert.deepEqual(order, sortDirection === 'asc' ? originals : [...originals].reverse());
      });
    }

    test('a tampered nextToken is refused with InvalidPayloadError', async () => {
      const c = await freshWorkspace('tamper');
      await createBots(c, 3, 'tamper');
      const first = await c.listBots({ pageSize: 1 });
      const token = first.meta.nextToken ?? assert.fail('a first page of 1 of 3 has a next token');
      // The genuine token works.
      assert.equal((await c.listBots({ pageSize: 1, nextToken: token })).bots.length, 1);

      const decoded = Buffer.from(token, 'base64url').toString('utf8');
      const tampered = [
        'not-a-token',
        token.slice(0, Math.floor(token.length / 2)),
        Buffer.from(decoded.replace('[', '{')).toString('base64url'),
        Buffer.from(JSON.stringify({ id: 'bot_x' })).toString('base64url'),
        Buffer.from(JSON.stringify(['bots.created_at:desc', 1, 'bot_x'])).toString('base64url'),
      ];
      for (const nextToken of tampered) {
        await assert.rejects(
          c.listBots({ pageSize: 1, nextToken }),
          InvalidPayloadError,
          `token ${nextToken}`,
        );
      }
      // A token of one ordering cannot be replayed under another.
      await assert.rejects(
        c.listBots({ pageSize: 1, nextToken: token, sortDirection: 'asc' }),
        InvalidPayloadError,
      );
      await assert.rejects(
        c.listBots({ pageSize: 1, nextToken: token, sortField: 'updatedAt' }),
        InvalidPayloadError,
      );
      // Nor a token of another list.
      const ws = await t.client().listWorkspaces({ pageSize: 1 });
      const wsToken = ws.meta.nextToken ?? assert.fail('more than one workspace exists by now');
      await assert.rejects(c.listBots({ nextToken: wsToken }), InvalidPayloadError);
    });
  });
}
