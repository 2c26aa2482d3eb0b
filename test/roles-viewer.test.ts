import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BOT_OPERATIONS } from '../src/contract/bot-operations.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

interface OpenApi {
  paths: Record<string, Record<string, { operationId?: string }>>;
}

/** Admin API operations that change nothing although they are not GETs. */
const ADMIN_READS = new Set(['introspect', 'checkHandleAvailability']);
/** Admin API operations a viewer may do: on its own account and tokens, not on the workspace. */
const OWN_ACCOUNT = new Set([
  'updateAccount',
  'createPersonalAccessToken',
  'deletePersonalAccessToken',
  'createWorkspace',
  'deleteWorkspaceMember',
]);

/** Bodies that pass validation, for the Admin API operations that require fields. */
const VALID_BODIES: Record<string, object> = {
  createWorkspaceMember: { email: 'someone@example.com', role: 'viewer' },
  createBotApiKey: { botId: 'set below' },
  createWebhookSubscription: { url: 'http://example.com/hook', eventTypes: ['*'] },
  createIntegration: { name: 'viewer-made', version: '1.0.0' },
};

for (const store of await testStores()) {
  describe(`a viewer reads and never writes, on every API (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let viewerToken: string;
    let developerToken: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'watched');
      const tokenOf = async (role: 'viewer' | 'developer') => {
        const email = `${role}-${Date.now()}@example.com`;
        await t.client().createWorkspaceMember({ email, role });
        const account = await t.server.domain.accounts.findByEmail(email);
        assert.ok(account);
        return (await t.server.domain.accounts.createToken(account.id, role)).value;
      };
      viewerToken = await tokenOf('viewer');
      VALID_BODIES.createBotApiKey = { botId: bot.botId };
      developerToken = await tokenOf('developer');
    });
    after(() => t.close());

    const call = (token: string, method: string, path: string, body: object = {}) =>
      fetch(`${t.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'x-bot-id': bot.botId,
          'x-workspace-id': t.workspaceId,
          ...(method !== 'GET' && { 'content-type': 'application/json' }),
        },
        ...(method !== 'GET' && { body: JSON.stringify(body) }),
      });

    test('every write of the Runtime API (and of every API bot code calls) answers a viewer 403', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as OpenApi;
      const routes = new Map(
        Object.entries(doc.paths).flatMap(([path, methods]) =>
          Object.entries(methods).map(([method, op]) => [op.operationId, { method, path }] as const),
        ),
      );
      const writes = BOT_OPERATIONS.filter((op) => op.access === 'write');
      assert.ok(writes.length > 25, `the write operations (${writes.length})`);
      const allowed: string[] = [];
      for (const op of writes) {
        const route = routes.get(op.id);
        assert.ok(route, `${op.id} is in the API description`);
        const path = route.path.replace(/\{[^}]+\}/g, 'some-id');
        const res = await call(viewerToken, route.method.toUpperCase(), path);
        const body = (await res.json()) as { type?: string };
        if (res.status !== 403 || body.type !== 'Forbidden') allowed.push(`${op.id}: ${res.status}`);
      }
      assert.deepEqual(allowed, []);
    });

    test('a viewer reads through the Runtime API; a developer writes', async () => {
      const read = await call(viewerToken, 'GET', '/v1/chat/conversations');
      assert.equal(read.status, 200);
      const write = await fetch(`${t.url}/v1/chat/conversations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${developerToken}`,
          'x-bot-id': bot.botId,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ channel: 'c', tags: {} }),
      });
      assert.equal(write.status, 201);
    });

    test('every write of the Admin API on the workspace answers a viewer 403', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as OpenApi;
      const allowed: string[] = [];
      for (const [path, methods] of Object.entries(doc.paths)) {
        if (!path.startsWith('/v1/admin/')) continue;
        for (const [method, op] of Object.entries(methods)) {
          const id = op.operationId ?? '';
          if (method === 'get' || ADMIN_READS.has(id) || OWN_ACCOUNT.has(id)) continue;
          // A body that passes validation, so the role is what refuses it.
          const body = VALID_BODIES[id] ?? {};
          const target = path.startsWith('/v1/admin/workspaces/') ? t.workspaceId : bot.botId;
          const res = await call(viewerToken, method.toUpperCase(), path.replace(/\{[^}]+\}/g, target), body);
          if (res.status !== 403) allowed.push(`${method.toUpperCase()} ${path} (${id}): ${res.status}`);
        }
      }
      assert.deepEqual(allowed, []);
    });

    test("the chat channel's signing key and the bot's signing secret are hidden from a viewer", async () => {
      const key = 'a-personal-signing-key-of-32-chars!';
      await t
        .client()
        .updateBot({ id: bot.botId, integrations: { chat: { configuration: { encryptionKey: key } } } });
      const asOwner = (await t.client().getBot({ id: bot.botId })).bot;
      assert.equal(asOwner.integrations.chat?.configuration.encryptionKey, key);
      assert.notEqual(asOwner.signingSecret, '');
      const asViewer = (await t.client({ token: viewerToken }).getBot({ id: bot.botId })).bot;
      assert.equal(asViewer.integrations.chat?.configuration.encryptionKey, undefined);
      assert.equal(asViewer.signingSecret, '');
      const listed = await t.client({ token: viewerToken }).listBots({});
      assert.doesNotMatch(JSON.stringify(listed), new RegExp(key));
    });

    test("captureObservation refuses another bot's records", async () => {
      const other = await createTestBot(t, 'other');
      const { user } = await other.client.createUser({ tags: {} });
      const res = await fetch(`${t.url}/v1/chat/observations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bot.key}`,
          'x-bot-id': bot.botId,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'seen', data: {}, userId: user.id }),
      });
      assert.equal(res.status, 404);
    });
  });
}
