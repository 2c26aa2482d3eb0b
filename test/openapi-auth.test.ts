import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { parleyAdmin } from './helpers/parley-client.ts';

/**
 * The routes that answer without credentials, on purpose. Every other route of the API description
 * must refuse a caller without them: authentication is each API's default, never a route's option.
 */
const PUBLIC = new Set([
  'GET /healthz',
  'GET /readyz',
  // Counts and timings only: no ids, no content.
  'GET /metrics',
  'GET /chat/{webhookId}/hello',
  'GET /chat/{webhookId}/hello/',
  // The API's description, this very document.
  'GET /openapi.json',
  // Shared mode: the server creates the user and signs its key.
  'POST /chat/{webhookId}/users',
  // The webchat: a first visit creates its user (shared mode); the look is public; metrics are ignored.
  'POST /webchat/{clientId}/users',
  'GET /webchat/{clientId}/initialize',
  'GET /webchat/{clientId}/config',
  'POST /webchat/{clientId}/p',
  // The permanent link of a file whose policy is `public_content`.
  'GET /file-content/public/{id}',
]);

/** Routes whose credential is the signature of their URL (the Files API's links): 403 without it. */
const SIGNED = new Set(['PUT /file-content/{id}/upload', 'GET /file-content/{id}']);

interface OpenApi {
  paths: Record<string, Record<string, { operationId?: string }>>;
}

for (const store of await testStores()) {
  describe(`every route but the public ones needs credentials (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let webhookId: string;
    let ingressId: string;
    before(async () => {
      t = await startTestServer(store);
      const { bot } = await t.client().createBot({ name: 'auth-walk' });
      const chat = (await t.client().getBot({ id: bot.id })).bot.integrations.chat;
      assert.ok(chat?.webhookId);
      webhookId = chat.webhookId;
      // The webhook ingress's credential is the request's signature (unless the bot turns it off).
      ingressId = (await parleyAdmin(t).getBotWebhook({ id: bot.id })).webhook.id;
    });
    after(() => t.close());

    test('without credentials, each route answers 401 (the documented public ones aside)', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as OpenApi;
      const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
      );
      assert.ok(routes.length > 60, `the description lists the routes (${routes.length})`);
      const unguarded: string[] = [];
      for (const { method, path } of routes) {
        const name = `${method} ${path}`;
        if (PUBLIC.has(name)) continue;
        // A real channel, so that the Chat API gets as far as asking for the user's key.
        const url = path
          .replace('{webhookId}', path.startsWith('/webhooks/') ? ingressId : webhookId)
          .replace('{clientId}', webhookId)
          .replace(/\{[^}]+\}/g, 'some-id');
        const res = await fetch(`${t.url}${url}`, {
          method,
          ...(method !== 'GET' && { headers: { 'content-type': 'application/json' }, body: '{}' }),
        });
        const expected = SIGNED.has(name) ? 403 : 401;
        if (res.status !== expected) unguarded.push(`${name} answered ${res.status}`);
      }
      assert.deepEqual(unguarded, []);
    });

    test('the public routes answer without credentials', async () => {
      assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${t.url}/readyz`)).status, 200);
      assert.equal((await fetch(`${t.url}/chat/${webhookId}/hello/`)).status, 200);
      const created = await fetch(`${t.url}/chat/${webhookId}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(created.status, 201);
      const webchat = `${t.url}/webchat/${webhookId}`;
      assert.equal((await fetch(`${webchat}/config`)).status, 200);
      const visitor = await fetch(`${webchat}/users`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(visitor.status, 201);
      const metrics = await fetch(`${webchat}/p`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(metrics.status, 200);
      const stop = new AbortController();
      const opened = await fetch(`${webchat}/initialize`, { signal: stop.signal });
      assert.equal(opened.status, 200);
      stop.abort();
    });
  });
}
