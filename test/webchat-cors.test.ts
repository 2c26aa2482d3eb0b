// CORS as browsers meet it: the preflights the official webchat and chat clients cause (the headers the
// webchat reference lists), the headers on answers and event streams, each bot's allow-list, and the
// Admin and Runtime APIs closed to other origins unless the operator allows some.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BOT_CORS_SETTING, CORS_REFUSED_HEADER } from '../src/api/cors.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { webchatClientId } from './helpers/webchat.ts';

const SHOP = 'https://shop.example.com';
const ELSEWHERE = 'https://elsewhere.example.org';

/** A browser's preflight for `method` with `headers` from `origin`. */
function preflight(url: string, origin: string, method: string, headers: string[]): Promise<Response> {
  return fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers.join(','),
    },
  });
}

const allowedHeaders = (res: Response) =>
  (res.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());

for (const store of await testStores()) {
  describe(
    `CORS of the chat-facing routes and the platform APIs (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      let botId: string;
      let clientId: string;
      let webchat: string;
      let chat: string;
      let userKey: string;

      before(async () => {
        t = await startTestServer(store);
        ({
          bot: { id: botId },
        } = await t.client().createBot({ name: 'cors' }));
        clientId = await webchatClientId(t, botId);
        webchat = `${t.url}/webchat/${clientId}`;
        chat = `${t.url}/chat/${clientId}`;
        const created = await fetch(`${chat}/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        userKey = ((await created.json()) as { key: string }).key;
      });
      after(() => t?.close());

      test('the webchat’s preflights are answered with the headers it sends, timeout and x-user-key included', async () => {
        for (const [path, method, headers] of [
          ['/initialize', 'GET', ['timeout']],
          ['/initialize', 'GET', ['timeout', 'x-user-key']],
          ['/messages', 'POST', ['content-type', 'x-user-key']],
          ['/messages/m1/feedback', 'PUT', ['content-type', 'x-user-key']],
          ['/conversations', 'GET', ['x-user-key']],
          ['/users', 'POST', ['content-type', 'x-admin-secret']],
        ] as const) {
          const res = await preflight(`${webchat}${path}`, SHOP, method, [...headers]);
          assert.equal(res.status, 204, `${method} ${path}`);
          assert.equal(res.headers.get('access-control-allow-origin'), '*');
          assert.match(res.headers.get('access-control-allow-methods') ?? '', new RegExp(method));
          for (const header of headers) assert.ok(allowedHeaders(res).includes(header), `${path}: ${header}`);
          assert.ok(Number(res.headers.get('access-control-max-age')) > 0);
          assert.equal(
            res.headers.get('access-control-allow-credentials'),
            null,
            'keys are headers, not cookies',
          );
        }
      });

      test('answers carry Access-Control-Allow-Origin: JSON, errors and the event stream', async () => {
        const json = await fetch(`${webchat}/users/me`, { headers: { origin: SHOP, 'x-user-key': userKey } });
        assert.equal(json.status, 200);
        assert.equal(json.headers.get('access-control-allow-origin'), '*');
        const error = await fetch(`${webchat}/users/me`, { headers: { origin: SHOP } });
        assert.equal(error.status, 401);
        assert.equal(error.headers.get('access-control-allow-origin'), '*', 'the page can read why');
        const controller = new AbortController();
        const stream = await fetch(`${webchat}/initialize`, {
          headers: { origin: SHOP, accept: 'text/event-stream', timeout: '60000' },
          signal: controller.signal,
        });
        assert.equal(stream.status, 200);
        assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
        assert.equal(stream.headers.get('access-control-allow-origin'), '*');
        controller.abort();
        const chatPreflight = await preflight(`${chat}/conversations/c1/listen`, SHOP, 'GET', ['x-user-key']);
        assert.equal(chatPreflight.status, 204);
        assert.equal(chatPreflight.headers.get('access-control-allow-origin'), '*');
      });

      test('a bot’s allow-list: its origins are answered, others are not, on the webchat and the Chat API', async () => {
        await t.client().updateBot({
          id: botId,
          integrations: { chat: { configuration: { allowedOrigins: [SHOP] } } },
        });
        const { bot } = await t.client().getBot({ id: botId });
        assert.deepEqual(bot.integrations.chat?.configuration, { allowedOrigins: [SHOP] });
        for (const base of [webchat, chat]) {
          const allowed = await preflight(`${base}/messages`, SHOP, 'POST', ['content-type', 'x-user-key']);
          assert.equal(allowed.headers.get('access-control-allow-origin'), SHOP);
          assert.match(allowed.headers.get('vary') ?? '', /origin/i);
          const refused = await preflight(`${base}/messages`, ELSEWHERE, 'POST', [
            'content-type',
            'x-user-key',
          ]);
          assert.equal(refused.headers.get('access-control-allow-origin'), null);
          const answer = await fetch(`${base}/users/me`, {
            headers: { origin: ELSEWHERE, 'x-user-key': userKey },
          });
          assert.equal(
            answer.headers.get('access-control-allow-origin'),
            null,
            'the browser keeps it from the page',
          );
          // Its developer tools show why, on the preflight and the answer alike.
          for (const res of [refused, answer]) {
            assert.equal(
              res.headers.get(CORS_REFUSED_HEADER),
              `${ELSEWHERE} is not an allowed origin: see ${BOT_CORS_SETTING}`,
            );
          }
          assert.equal(allowed.headers.get(CORS_REFUSED_HEADER), null, 'an allowed origin is not told so');
        }
        const page = await fetch(`${t.url}/s/${clientId}`);
        assert.match(
          page.headers.get('content-security-policy') ?? '',
          /frame-ancestors https:\/\/shop\.example\.com/,
        );

        // The configuration is given whole: without allowedOrigins, any origin again.
        await t.client().updateBot({ id: botId, integrations: { chat: { configuration: {} } } });
        const again = await preflight(`${webchat}/messages`, ELSEWHERE, 'POST', ['content-type']);
        assert.equal(again.headers.get('access-control-allow-origin'), '*');
      });

      test('an allow-list entry that is not an origin, or an unknown setting, is refused naming the field', async () => {
        for (const [configuration, pattern] of [
          [{ allowedOrigins: ['https://shop.example.com/path'] }, /allowedOrigins\[0\] must be an origin/],
          [{ allowedOrigins: ['shop.example.com'] }, /allowedOrigins\[0\]/],
          [{ allowedOrigin: [SHOP] }, /integrations\.chat\.configuration .*allowedOrigin/],
          [{ webchat: { color: 'blue' } }, /integrations\.chat\.configuration\.webchat\.color/],
        ] as const) {
          const res = await fetch(`${t.url}/v1/admin/bots/${botId}`, {
            method: 'PUT',
            headers: {
              authorization: `Bearer ${t.token}`,
              'x-workspace-id': t.workspaceId,
              'content-type': 'application/json',
            },
            body: JSON.stringify({ integrations: { chat: { configuration } } }),
          });
          assert.equal(res.status, 400, JSON.stringify(configuration));
          const body = (await res.json()) as { type: string; message: string };
          assert.equal(body.type, 'InvalidPayload');
          assert.match(body.message, pattern);
        }
      });

      test('the Admin and Runtime APIs answer no other origin unless the operator allows it', async () => {
        const headers = { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId, origin: SHOP };
        const bots = await fetch(`${t.url}/v1/admin/bots`, { headers });
        assert.equal(bots.status, 200);
        assert.equal(bots.headers.get('access-control-allow-origin'), null);
        const adminPreflight = await preflight(`${t.url}/v1/admin/bots`, SHOP, 'GET', ['authorization']);
        assert.equal(adminPreflight.headers.get('access-control-allow-origin'), null);
        const runtimePreflight = await preflight(`${t.url}/v1/chat/actions`, SHOP, 'POST', ['authorization']);
        assert.equal(runtimePreflight.headers.get('access-control-allow-origin'), null);
      });
    },
  );
}

describe('PARLEY_CORS_ORIGINS opens the Admin and Runtime APIs to the origins it names', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ name: 'sqlite' }, { corsOrigins: `${SHOP}, https://admin.example.com` });
  });
  after(() => t?.close());

  test('preflights and answers name the allowed origin; others get nothing', async () => {
    const res = await preflight(`${t.url}/v1/admin/bots`, SHOP, 'GET', ['authorization', 'x-workspace-id']);
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), SHOP);
    assert.ok(allowedHeaders(res).includes('x-workspace-id'));
    const runtime = await preflight(`${t.url}/v1/chat/actions`, SHOP, 'POST', ['authorization', 'x-bot-id']);
    assert.equal(runtime.headers.get('access-control-allow-origin'), SHOP);
    assert.ok(allowedHeaders(runtime).includes('x-bot-id'));
    const bots = await fetch(`${t.url}/v1/admin/bots`, {
      headers: { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId, origin: SHOP },
    });
    assert.equal(bots.headers.get('access-control-allow-origin'), SHOP);
    const other = await preflight(`${t.url}/v1/admin/bots`, ELSEWHERE, 'GET', ['authorization']);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(
      other.headers.get(CORS_REFUSED_HEADER),
      `${ELSEWHERE} is not an allowed origin: see the server setting PARLEY_CORS_ORIGINS`,
    );
  });
});
