// Rate limits as callers meet them: per end user on the Chat API, per token on the Runtime and Admin
// APIs, once verified; per client address always, so that a made-up key or token counts against its
// address (and nothing else); 429 RateLimited with Retry-After past a limit, one caller's excess costing
// no other caller anything; counted in Redis when one is configured; the client's address taken from
// X-Forwarded-For only behind a trusted proxy (PARLEY_TRUST_PROXY), which is then not counted as a
// client itself; off with PARLEY_RATE_LIMITS=off.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { isApiError } from '@botpress/client';
import { Redis } from 'ioredis';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { createChatBot, listenUrl, openSse } from './helpers/sse.ts';
import { testStores } from './helpers/stores.ts';

/**
 * A Redis database of this suite's own: counts are kept by client address, and other suites running at
 * the same time call from the same address (127.0.0.1).
 */
const REDIS_URL = (() => {
  const url = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  url.pathname = '/9';
  return url.toString();
})();
const ADDRESS_LIMIT = 30;
const LIMITS = {
  rateLimitChatPerMinute: '5',
  rateLimitApiPerMinute: '10',
  rateLimitAddressPerMinute: String(ADDRESS_LIMIT),
};

/** Calls `send` until it is answered 429, at most `max` times; the statuses, in order. */
async function untilLimited(send: (i: number) => Promise<Response>, max: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < max && statuses.at(-1) !== 429; i++) {
    const res = await send(i);
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

/** The status and body of a raw request. */
async function call(url: string, headers: Record<string, string>) {
  const res = await fetch(url, { headers });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { code?: number; type?: string },
  };
}

for (const store of await testStores()) {
  for (const shared of store.name === 'postgres' ? [false, true] : [false]) {
    const name = `rate limits (${store.name}${shared ? ', counted in Redis' : ''})`;
    describe(name, { skip: store.skip }, () => {
      let t: TestServer;
      let bot: TestBot;
      let webhookUrl: string;
      before(async () => {
        t = await startTestServer(store, { ...LIMITS, ...(shared && { redisUrl: REDIS_URL }) });
        // Redis keeps counts between runs: this run's server counts from zero.
        if (shared) {
          const redis = new Redis(REDIS_URL);
          const keys = await redis.keys('parley-rate-*');
          if (keys.length > 0) await redis.del(...keys);
          redis.disconnect();
        }
        bot = await createTestBot(t, 'limited');
        webhookUrl = (await t.client().getBot({ id: bot.botId })).bot.integrations.chat!.webhookUrl!;
      });
      after(() => t?.close());

      test('an end user past its limit gets 429 RateLimited with Retry-After; another user does not', async () => {
        const ada = await chat.Client.connect({ apiUrl: webhookUrl, userId: 'ada' });
        const headers = { 'x-user-key': ada.user.key };
        const statuses: number[] = [];
        let last: Awaited<ReturnType<typeof call>> | undefined;
        for (let i = 0; i < 6; i++) {
          last = await call(`${webhookUrl}/users/me`, headers);
          statuses.push(last.status);
        }
        assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
        assert.ok(last);
        assert.match(last.retryAfter ?? '', /^\d+$/, 'Retry-After in seconds');
        assert.ok(Number(last.retryAfter) > 0 && Number(last.retryAfter) <= 60);
        assert.deepEqual({ code: last.body.code, type: last.body.type }, { code: 429, type: 'RateLimited' });
        // The key never travels to the store as it is.
        if (shared) {
          const redis = new Redis(REDIS_URL);
          const keys = await redis.keys('parley-rate-chat-*');
          redis.disconnect();
          assert.ok(keys.length > 0, 'the counts are in Redis');
          assert.ok(keys.every((key) => !key.includes(ada.user.key)));
        }

        const grace = await chat.Client.connect({ apiUrl: webhookUrl, userId: 'grace' });
        assert.equal((await call(`${webhookUrl}/users/me`, { 'x-user-key': grace.user.key })).status, 200);
      });

      test('a token past its limit gets 429 through the official client; another token is served', async () => {
        const limited = bot.client;
        let refused: unknown;
        for (let i = 0; i < 11 && refused === undefined; i++) {
          await limited.listConversations({}).catch((err: unknown) => (refused = err));
        }
        assert.ok(isApiError(refused), `a RateLimited error (got ${String(refused)})`);
        assert.equal(refused.type, 'RateLimited');
        assert.equal(refused.code, 429);
        // The owner's token is counted apart from the bot's key.
        assert.equal((await t.client().getBot({ id: bot.botId })).bot.id, bot.botId);
      });

      test('made-up tokens count against their address only: 429 past its limit; a valid token is still served', async () => {
        const statuses = await untilLimited(
          (i) =>
            fetch(`${t.url}/v1/chat/conversations`, {
              headers: { authorization: `Bearer bp_bak_made_up_${i}`, 'x-bot-id': bot.botId },
            }),
          ADDRESS_LIMIT + 1,
        );
        // The address had made requests before (this suite's): the 429 comes at its limit, or before.
        assert.equal(statuses.at(-1), 429, `a made-up token each time, never limited: ${statuses.join(' ')}`);
        assert.ok(statuses.slice(0, -1).every((status) => status === 401));
        const refused = await call(`${t.url}/v1/chat/conversations`, {
          authorization: 'Bearer bp_bak_made_up_again',
          'x-bot-id': bot.botId,
        });
        assert.equal(refused.status, 429);
        assert.match(refused.retryAfter ?? '', /^\d+$/);
        assert.deepEqual(
          { code: refused.body.code, type: refused.body.type },
          { code: 429, type: 'RateLimited' },
        );
        // A token that verifies is counted as itself, wherever it comes from.
        assert.equal((await t.client().getBot({ id: bot.botId })).bot.id, bot.botId);
      });

      // Last: it spends the address's requests on the Chat API.
      test('made-up user keys count against their address; past its limit the Chat API refuses it whatever the key', async () => {
        const statuses = await untilLimited(
          (i) => fetch(`${webhookUrl}/users/me`, { headers: { 'x-user-key': `made-up-key-${i}` } }),
          ADDRESS_LIMIT + 1,
        );
        assert.equal(statuses.at(-1), 429, `a made-up key each time, never limited: ${statuses.join(' ')}`);
        assert.ok(statuses.slice(0, -1).every((status) => status === 401));
        // Anyone can make a user, and so a valid key: the address's limit holds for those too.
        const res = await fetch(`${webhookUrl}/users`, {
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(res.status, 429);
        await res.arrayBuffer();
      });
    });
  }

  for (const trusted of [true, false]) {
    const name = trusted ? 'behind a trusted proxy' : 'without PARLEY_TRUST_PROXY';
    describe(`rate limits ${name} (${store.name})`, { skip: store.skip }, () => {
      const PER_ADDRESS = 3;
      const PER_MINUTE = 5;
      let t: TestServer;
      let webhookUrl: string;
      before(async () => {
        t = await startTestServer(store, {
          rateLimitAddressPerMinute: String(PER_MINUTE),
          maxConnectionsPerAddress: String(PER_ADDRESS),
          ...(trusted && { trustProxy: '127.0.0.1' }),
        });
        webhookUrl = (await createChatBot(t, 'proxied')).webhookUrl;
      });
      after(() => t?.close());

      const hello = (client: string) =>
        fetch(`${webhookUrl}/hello`, { headers: { 'x-forwarded-for': `${client}, 127.0.0.1` } });

      test(`X-Forwarded-For ${trusted ? 'names the client: clients are counted apart' : 'is ignored: it is all one address'}`, async () => {
        const statuses = await untilLimited(() => hello('203.0.113.7'), PER_MINUTE + 1);
        assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
        const other = await hello('203.0.113.8');
        await other.arrayBuffer();
        assert.equal(other.status, trusted ? 200 : 429);
      });

      if (trusted) {
        test('the proxy is no client of its own: each client behind it may have so many requests in progress', async () => {
          const setup = { 'x-forwarded-for': '198.51.100.50' };
          const user = await chat.Client.connect({
            apiUrl: webhookUrl,
            userId: 'behind-proxy',
            headers: setup,
          });
          await user.createConversation({ id: 'proxied' });
          const listen = (client: string) =>
            openSse(listenUrl(webhookUrl, 'proxied'), {
              userKey: user.user.key,
              headers: { 'x-forwarded-for': client },
            });
          // Each of its own connection from the proxy's address (127.0.0.1): more than its per-address limit.
          const open = [];
          try {
            for (let i = 0; i < PER_ADDRESS; i++) open.push(await listen('198.51.100.1'));
            assert.deepEqual(
              open.map((s) => s.status),
              [200, 200, 200],
            );
            const past = await listen('198.51.100.1');
            open.push(past);
            assert.equal(past.status, 429, 'the client past its limit is refused');
            assert.match(past.body(), /RateLimited/);
            const another = await listen('198.51.100.2');
            open.push(another);
            assert.equal(another.status, 200, 'another client behind the same proxy is served');
          } finally {
            for (const stream of open) stream.destroy();
          }
        });
      }
    });
  }

  describe(`rate limits off (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(store, { ...LIMITS, rateLimits: 'off' });
    });
    after(() => t?.close());

    test('PARLEY_RATE_LIMITS=off: no request is refused for its number', async () => {
      const statuses = new Set<number>();
      for (let i = 0; i < 30; i++) {
        const res = await fetch(`${t.url}/v1/admin/workspaces`, {
          headers: { authorization: `Bearer ${t.token}` },
        });
        statuses.add(res.status);
        await res.arrayBuffer();
      }
      assert.deepEqual([...statuses], [200]);
    });
  });
}
