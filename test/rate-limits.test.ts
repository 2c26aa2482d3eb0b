// Rate limits as callers meet them: per end user on the Chat API, per token on the Runtime and Admin
// APIs, 429 RateLimited with Retry-After past the limit, one caller's excess costing no other caller
// anything; counted in Redis when one is configured; off with PARLEY_RATE_LIMITS=off.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { isApiError } from '@botpress/client';
import { Redis } from 'ioredis';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LIMITS = { rateLimitChatPerMinute: '5', rateLimitApiPerMinute: '10' };

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
