import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ADMIN_ACCOUNT_OPERATIONS,
  ADMIN_MEMBER_OPERATIONS,
  ADMIN_TOKEN_OPERATIONS,
} from '../src/contract/admin/index.ts';
import { BOT_OPERATIONS } from '../src/contract/bot-operations.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

interface OpenApi {
  paths: Record<string, Record<string, { operationId?: string }>>;
}

const ADMIN_OPERATIONS = [...ADMIN_MEMBER_OPERATIONS, ...ADMIN_ACCOUNT_OPERATIONS, ...ADMIN_TOKEN_OPERATIONS];
/** Admin API operations a viewer may do: on its own account and tokens, not on the workspace. */
const OWN_ACCOUNT = new Set([
  'updateAccount',
  'createPersonalAccessToken',
  'deletePersonalAccessToken',
  'createWorkspace',
  'deleteWorkspaceMember',
]);

/**
 * Admin API reads a viewer may not make: a bot's API keys are for those who may manage them, the
 * workspace's model providers (their URLs) for those who build its bots, a draft's test turns for those who test
 * it.
 */
const GUARDED_READS = new Set(['listBotApiKeys', 'listLlmProviders', 'listBotDraftTestTurns']);
/** Bodies that pass validation, for the Admin API operations that require fields. */
const VALID_BODIES: Record<string, object> = {
  createWorkspaceMember: { email: 'someone@example.com', role: 'viewer' },
  createBotApiKey: { botId: 'set below' },
  createWebhookSubscription: { url: 'http://example.com/hook', eventTypes: ['*'] },
  createIntegration: { name: 'viewer-made', version: '1.0.0' },
  createInterface: { name: 'viewer-made', version: '1.0.0' },
  createPlugin: { name: 'viewer-made', version: '1.0.0', code: { node: '', browser: '' } },
  changeAISpendQuota: { monthlySpendingLimit: 10 },
  createLlmProvider: { name: 'viewer-made', baseUrl: 'http://example.com/v1', models: ['m'] },
  introspect: { botId: 'set below' },
  checkHandleAvailability: { handle: 'viewer-handle' },
  createHandoffMessage: { payload: { type: 'text', text: 'a viewer answering' } },
  createBotVersion: { name: 'viewer-made' },
  deployBotVersion: { versionId: 'botver_viewer' },
  validateBotDraft: { files: {} },
  saveBotDraft: { files: {}, layout: {} },
};
/** Query strings that pass validation, for the Admin API reads that require some. */
const VALID_QUERIES: Record<string, string> = {
  listBotApiKeys: 'botId=set below',
  getBotLogs: `timeStart=${new Date(0).toISOString()}`,
  listBotDraftTestTurns: 'messageId=msg_any',
  getBotAnalytics: `startDate=${new Date(Date.now() - 86_400_000).toISOString()}&endDate=${new Date().toISOString()}`,
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
      VALID_BODIES.introspect = { botId: bot.botId };
      VALID_QUERIES.listBotApiKeys = `botId=${bot.botId}`;
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

    /** An Admin API operation's route, its path's parameters filled with the workspace's or the bot's id. */
    const adminPath = (op: { path: string }) =>
      `/v1/admin${op.path
        .replace(':platform', 'node')
        .replace(/:\w+/g, op.path.startsWith('/workspaces/') ? t.workspaceId : bot.botId)}`;

    test('every write of the Admin API on the workspace answers a viewer 403', async () => {
      const writes = ADMIN_OPERATIONS.filter((op) => op.access === 'write' && !OWN_ACCOUNT.has(op.id));
      assert.ok(writes.length > 15, `the write operations (${writes.length})`);
      const allowed: string[] = [];
      for (const op of writes) {
        // A body that passes validation, so the role is what refuses it.
        const res = await call(viewerToken, op.method, adminPath(op), VALID_BODIES[op.id] ?? {});
        if (res.status !== 403) allowed.push(`${op.method} ${op.path} (${op.id}): ${res.status}`);
      }
      assert.deepEqual(allowed, []);
    });

    test('every read of the Admin API answers a viewer (found, or not found), but the guarded ones', async () => {
      const reads = ADMIN_OPERATIONS.filter((op) => op.access === 'read');
      assert.ok(reads.length > 15, `the read operations (${reads.length})`);
      const unexpected: string[] = [];
      for (const op of reads) {
        const query = VALID_QUERIES[op.id];
        const path = query === undefined ? adminPath(op) : `${adminPath(op)}?${query}`;
        const res = await call(viewerToken, op.method, path, VALID_BODIES[op.id] ?? {});
        const answered = res.status === 200 || res.status === 404;
        if (GUARDED_READS.has(op.id) ? res.status !== 403 : !answered) {
          unexpected.push(`${op.method} ${op.path} (${op.id}): ${res.status}`);
        }
      }
      assert.deepEqual(unexpected, []);
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
