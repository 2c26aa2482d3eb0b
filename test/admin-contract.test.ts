import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '@botpress/client';
import {
  ADMIN_ACCOUNT_OPERATIONS,
  ADMIN_MEMBER_OPERATIONS,
  ADMIN_TOKEN_OPERATIONS,
} from '../src/contract/admin/index.ts';
import { BOT_OPERATIONS } from '../src/contract/bot-operations.ts';
import { ApiError } from '../src/domain/shared/errors.ts';
import { BotClient } from '../src/engine/bot-client.ts';
import { loadPackage } from '../src/package/load.ts';
import { unique, unknownId } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/**
 * The Admin API as its contract declares it (src/contract/admin): each operation is the official
 * client's method of its name (or, for Parley's own, the route its declaration names), succeeds with
 * good arguments and fails with the error type of bad ones, and /openapi.json describes exactly these
 * operations with the credentials of their actor. Each operation needs a case here: a new one without
 * one fails the walk. Bot code's `client` offers none of them.
 */

type Args = Record<string, unknown>;

interface Case {
  /** Arguments that succeed, made fresh for each call (a delete needs its own record). */
  good?: () => Promise<Args>;
  /** Arguments that fail, and the error type they must give. */
  bad?: () => Promise<Args>;
  error?: string;
}

/** Operations of Parley's own, which the official client does not have: called as declared. */
const PARLEY_ONLY = new Set([
  'getBotWebhook',
  'updateBotWebhook',
  'listWebhookSubscriptions',
  'createWebhookSubscription',
  'deleteWebhookSubscription',
  'listLlmProviders',
  'createLlmProvider',
  'updateLlmProvider',
  'refreshLlmProviderModels',
  'deleteLlmProvider',
  'getBotModels',
  'updateBotModels',
  'listWorkspaceHandoffs',
  'listHandoffs',
  'getHandoff',
  'assignHandoff',
  'createHandoffMessage',
  'resolveHandoff',
  'getBotPackage',
  'getBotDraft',
  'validateBotDraft',
  'saveBotDraft',
  'discardBotDraft',
  'deployBotDraft',
  'startBotDraftTest',
  'listBotDraftTestTurns',
]);

const ADMIN_OPERATIONS = [...ADMIN_MEMBER_OPERATIONS, ...ADMIN_ACCOUNT_OPERATIONS, ...ADMIN_TOKEN_OPERATIONS];
type AdminOperation = (typeof ADMIN_OPERATIONS)[number];

/** The credentials each actor's operations are described with. */
const SECURITY_OF_ACTOR: [readonly AdminOperation[], unknown][] = [
  [ADMIN_MEMBER_OPERATIONS, [{ bearer: [], workspaceId: [] }]],
  [ADMIN_ACCOUNT_OPERATIONS, [{ bearer: [] }]],
  [ADMIN_TOKEN_OPERATIONS, [{ bearer: [] }]],
];

interface OpenApi {
  paths: Record<string, Record<string, { operationId?: string; security?: unknown }>>;
}

type Outcome = { ok: unknown } | { error: string };

/** A field of a JSON answer, if it is an object that has it. */
const field = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;

async function outcome(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await call() };
  } catch (err) {
    if (isApiError(err)) return { error: err.type };
    throw err;
  }
}

for (const store of await testStores()) {
  describe(`the Admin API's contract (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let botId: string;
    before(async () => {
      t = await startTestServer(store);
      botId = (await t.client().createBot({ name: 'contract' })).bot.id;
    });
    after(() => t.close());

    /** An operation the official client lacks, called from its declaration: path, query or body. */
    async function callDeclared(op: AdminOperation, args: Args): Promise<Outcome> {
      const rest = { ...args };
      const path = op.path.replace(/:(\w+)/g, (_, name: string) => {
        const value = String(rest[name]);
        delete rest[name];
        return encodeURIComponent(value);
      });
      const fields = Object.entries(rest).map(([k, v]): [string, string] => [k, String(v)]);
      const query = op.body ? '' : `?${new URLSearchParams(fields).toString()}`;
      const res = await fetch(`${t.url}/v1/admin${path}${query}`, {
        method: op.method,
        headers: {
          authorization: `Bearer ${t.token}`,
          'x-workspace-id': t.workspaceId,
          ...(op.body && { 'content-type': 'application/json' }),
        },
        ...(op.body && { body: JSON.stringify(rest) }),
      });
      const body: unknown = await res.json();
      return res.ok ? { ok: body } : { error: String(field(body, 'type')) };
    }

    function call(op: AdminOperation, args: Args): Promise<Outcome> {
      if (PARLEY_ONLY.has(op.id)) return callDeclared(op, args);
      const client = t.client();
      const method: unknown = Reflect.get(client, op.id);
      assert.equal(typeof method, 'function', `the official client has ${op.id}`);
      return outcome(() => Reflect.apply(method as (args: Args) => Promise<unknown>, client, [args]));
    }

    const missing = (prefix: string) => async () => ({ id: unknownId(prefix) });
    const bot = async () => (await t.client().createBot({ name: 'contract' })).bot.id;
    const member = async () =>
      (await t.client().createWorkspaceMember({ email: `${unique('m')}@example.com`, role: 'viewer' })).id;
    const botKey = async () => (await t.client().createBotApiKey({ botId })).id;
    const workspace = async () => (await t.client().createWorkspace({ name: 'contract' })).id;
    const pat = async () => (await t.client().createPersonalAccessToken({ note: 'contract' })).pat.id;
    const integrationName = () => unique('contract').toLowerCase();
    const integration = async () =>
      (await t.client().createIntegration({ name: integrationName(), version: '1.0.0' })).integration;
    const iface = async () =>
      (await t.client().createInterface({ name: integrationName(), version: '1.0.0' })).interface;
    const pluginCode = { node: 'module.exports = {}', browser: 'export default {}' };
    const plugin = async () =>
      (await t.client().createPlugin({ name: integrationName(), version: '1.0.0', code: pluginCode })).plugin;
    const subscription = async () => {
      const created = await callDeclared(operation('createWebhookSubscription'), {
        id: botId,
        url: 'http://example.com/hook',
        eventTypes: ['*'],
      });
      const id = 'ok' in created ? field(field(created.ok, 'subscription'), 'id') : undefined;
      assert.equal(typeof id, 'string', JSON.stringify(created));
      return String(id);
    };
    const day = 86_400_000;
    /** A bot deployed with code (the echo bot's package), and the version its deploy made. */
    const versioned = async () => {
      const code = JSON.stringify(await loadPackage('examples/echo-bot'));
      const { bot: made } = await t.client().createBot({ name: 'contract', code });
      const { versions } = await t.client().listBotVersions({ id: made.id });
      return { id: made.id, versionId: versions[0]?.id ?? assert.fail('a deploy makes a version') };
    };
    /** A workspace provider with declared models (its URL is never called by these cases). */
    const llmProvider = async () => {
      const name = unique('p')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '');
      const created = await callDeclared(operation('createLlmProvider'), {
        name,
        baseUrl: 'http://example.com/v1',
        models: ['m'],
      });
      assert.ok('ok' in created, JSON.stringify(created));
      return name;
    };

    const cases: Record<string, Case> = {
      getAccount: { good: async () => ({}) },
      updateAccount: {
        good: async () => ({ displayName: 'The owner' }),
        bad: async () => ({ displayName: '' }),
        error: 'InvalidPayload',
      },
      listPersonalAccessTokens: { good: async () => ({}) },
      createPersonalAccessToken: {
        good: async () => ({ note: 'contract' }),
        bad: async () => ({ note: 'x'.repeat(501) }),
        error: 'InvalidPayload',
      },
      deletePersonalAccessToken: {
        good: async () => ({ id: await pat() }),
        bad: missing('pat'),
        error: 'ResourceNotFound',
      },
      introspect: {
        good: async () => ({ botId }),
        bad: async () => ({ botId: unknownId('bot') }),
        error: 'Forbidden',
      },
      createWorkspace: {
        good: async () => ({ name: 'contract' }),
        bad: async () => ({ name: '' }),
        error: 'InvalidPayload',
      },
      listWorkspaces: {
        good: async () => ({ pageSize: 1 }),
        bad: async () => ({ pageSize: 0 }),
        error: 'InvalidPayload',
      },
      checkHandleAvailability: {
        good: async () => ({ handle: 'contract-handle' }),
        bad: async () => ({ handle: 'Not A Handle' }),
        error: 'InvalidPayload',
      },
      getWorkspace: {
        good: async () => ({ id: t.workspaceId }),
        bad: missing('wkspace'),
        error: 'ResourceNotFound',
      },
      updateWorkspace: {
        good: async () => ({ id: await workspace(), name: 'renamed' }),
        bad: async () => ({ id: unknownId('wkspace'), name: 'renamed' }),
        error: 'ResourceNotFound',
      },
      deleteWorkspace: {
        good: async () => ({ id: await workspace() }),
        bad: missing('wkspace'),
        error: 'ResourceNotFound',
      },
      changeAISpendQuota: {
        good: async () => ({ monthlySpendingLimit: 1_000 }),
        bad: async () => ({ monthlySpendingLimit: -1 }),
        error: 'InvalidPayload',
      },
      listWorkspaceMembers: {
        good: async () => ({ pageSize: 1 }),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getWorkspaceMember: { good: async () => ({}) },
      createWorkspaceMember: {
        good: async () => ({ email: `${unique('m')}@example.com`, role: 'viewer' }),
        bad: async () => ({ email: 'not an email', role: 'viewer' }),
        error: 'InvalidPayload',
      },
      updateWorkspaceMember: {
        good: async () => ({ id: await member(), role: 'developer' }),
        bad: async () => ({ id: unknownId('member'), role: 'developer' }),
        error: 'ResourceNotFound',
      },
      deleteWorkspaceMember: {
        good: async () => ({ id: await member() }),
        bad: missing('member'),
        error: 'ResourceNotFound',
      },
      listBotApiKeys: {
        good: async () => ({ botId }),
        bad: async () => ({ botId: unknownId('bot') }),
        error: 'ResourceNotFound',
      },
      createBotApiKey: {
        good: async () => ({ botId, note: 'contract' }),
        bad: async () => ({ botId: unknownId('bot') }),
        error: 'ResourceNotFound',
      },
      deleteBotApiKey: {
        good: async () => ({ id: await botKey() }),
        bad: missing('bak'),
        error: 'ResourceNotFound',
      },
      listBots: {
        good: async () => ({ pageSize: 1 }),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getBot: { good: async () => ({ id: botId }), bad: missing('bot'), error: 'ResourceNotFound' },
      createBot: {
        good: async () => ({ name: 'contract' }),
        bad: async () => ({ name: '' }),
        error: 'InvalidPayload',
      },
      updateBot: {
        good: async () => ({ id: await bot(), name: 'renamed' }),
        bad: async () => ({ id: unknownId('bot'), name: 'renamed' }),
        error: 'ResourceNotFound',
      },
      deleteBot: { good: async () => ({ id: await bot() }), bad: missing('bot'), error: 'ResourceNotFound' },
      getBotWebhook: { good: async () => ({ id: botId }), bad: missing('bot'), error: 'ResourceNotFound' },
      updateBotWebhook: {
        good: async () => ({ id: await bot(), verification: 'none' }),
        bad: async () => ({ id: botId, verification: 'trust-me' }),
        error: 'InvalidPayload',
      },
      rotateBotSigningSecrets: {
        good: async () => ({ id: botId }),
        bad: missing('bot'),
        error: 'ResourceNotFound',
      },
      listWebhookSubscriptions: {
        good: async () => ({ id: botId }),
        bad: missing('bot'),
        error: 'ResourceNotFound',
      },
      createWebhookSubscription: {
        good: async () => ({ id: botId, url: 'http://example.com/hook', eventTypes: ['*'] }),
        bad: async () => ({ id: botId, url: 'http://example.com/hook', eventTypes: [] }),
        error: 'InvalidPayload',
      },
      deleteWebhookSubscription: {
        good: async () => ({ id: botId, subscriptionId: await subscription() }),
        bad: async () => ({ id: botId, subscriptionId: unknownId('whsub') }),
        error: 'ResourceNotFound',
      },
      createIntegration: {
        good: async () => ({ name: integrationName(), version: '1.0.0' }),
        bad: async () => ({ name: 'Not A Name', version: '1.0.0' }),
        error: 'InvalidPayload',
      },
      listIntegrations: {
        good: async () => ({ pageSize: 1 }),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getIntegration: {
        good: async () => ({ id: (await integration()).id }),
        bad: missing('intver'),
        error: 'ResourceNotFound',
      },
      getIntegrationByName: {
        good: async () => {
          const { name, version } = await integration();
          return { name, version };
        },
        bad: async () => ({ name: integrationName(), version: '9.9.9' }),
        error: 'ResourceNotFound',
      },
      updateIntegration: {
        good: async () => ({ id: (await integration()).id, title: 'Renamed' }),
        bad: async () => ({ id: unknownId('intver'), title: 'Renamed' }),
        error: 'ResourceNotFound',
      },
      deleteIntegration: {
        good: async () => ({ id: (await integration()).id }),
        bad: missing('intver'),
        error: 'ResourceNotFound',
      },
      rotateIntegrationSigningSecrets: {
        good: async () => ({ id: (await integration()).id }),
        bad: missing('intver'),
        error: 'ResourceNotFound',
      },
      // The hub: the built-ins, and what the operator published.
      listPublicIntegrations: {
        good: async () => ({ name: 'chat' }),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getPublicIntegrationById: {
        good: async () => ({ id: 'chat' }),
        bad: missing('intver'),
        error: 'ResourceNotFound',
      },
      getPublicIntegration: {
        good: async () => ({ name: 'chat', version: 'latest' }),
        bad: async () => ({ name: 'telegram', version: '0.5.0' }),
        error: 'ResourceNotFound',
      },
      createInterface: {
        good: async () => ({ name: integrationName(), version: '1.0.0' }),
        bad: async () => ({ name: 'Not A Name', version: '1.0.0' }),
        error: 'InvalidPayload',
      },
      listInterfaces: {
        good: async () => ({ pageSize: 1 }),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getInterface: {
        good: async () => ({ id: (await iface()).id }),
        bad: missing('intrver'),
        error: 'ResourceNotFound',
      },
      getInterfaceByName: {
        good: async () => {
          const { name, version } = await iface();
          return { name, version };
        },
        bad: async () => ({ name: integrationName(), version: '9.9.9' }),
        error: 'ResourceNotFound',
      },
      updateInterface: {
        good: async () => ({ id: (await iface()).id, title: 'Renamed' }),
        bad: async () => ({ id: unknownId('intrver'), title: 'Renamed' }),
        error: 'ResourceNotFound',
      },
      deleteInterface: {
        good: async () => ({ id: (await iface()).id }),
        bad: missing('intrver'),
        error: 'ResourceNotFound',
      },
      listPublicInterfaces: {
        good: async () => ({}),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getPublicInterfaceById: { bad: missing('intrver'), error: 'ResourceNotFound' },
      getPublicInterface: { bad: async () => ({ name: 'llm', version: '0.0.1' }), error: 'ResourceNotFound' },
      createPlugin: {
        good: async () => ({ name: integrationName(), version: '1.0.0', code: pluginCode }),
        bad: async () => ({ name: integrationName(), version: '1.0.0' }),
        error: 'InvalidPayload',
      },
      listPlugins: {
        good: async () => ({ pageSize: 1 }),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getPlugin: {
        good: async () => ({ id: (await plugin()).id }),
        bad: missing('plugver'),
        error: 'ResourceNotFound',
      },
      getPluginByName: {
        good: async () => {
          const { name, version } = await plugin();
          return { name, version };
        },
        bad: async () => ({ name: integrationName(), version: '9.9.9' }),
        error: 'ResourceNotFound',
      },
      getPluginCode: {
        good: async () => ({ id: (await plugin()).id, platform: 'node' }),
        bad: async () => ({ id: unknownId('plugver'), platform: 'node' }),
        error: 'ResourceNotFound',
      },
      updatePlugin: {
        good: async () => ({ id: (await plugin()).id, title: 'Renamed' }),
        bad: async () => ({ id: unknownId('plugver'), title: 'Renamed' }),
        error: 'ResourceNotFound',
      },
      deletePlugin: {
        good: async () => ({ id: (await plugin()).id }),
        bad: missing('plugver'),
        error: 'ResourceNotFound',
      },
      listPublicPlugins: {
        good: async () => ({}),
        bad: async () => ({ pageSize: 101 }),
        error: 'InvalidPayload',
      },
      getPublicPluginById: { bad: missing('plugver'), error: 'ResourceNotFound' },
      getPublicPlugin: { bad: async () => ({ name: 'hitl', version: '1.0.0' }), error: 'ResourceNotFound' },
      getPublicPluginCode: {
        bad: async () => ({ id: unknownId('plugver'), platform: 'node' }),
        error: 'ResourceNotFound',
      },
      listLlmProviders: { good: async () => ({}) },
      createLlmProvider: {
        good: async () => ({
          name: unique('p')
            .toLowerCase()
            .replace(/[^a-z0-9-]/g, ''),
          baseUrl: 'http://example.com/v1',
          models: ['m'],
        }),
        bad: async () => ({ name: 'default', baseUrl: 'http://example.com/v1', models: ['m'] }),
        error: 'InvalidPayload',
      },
      updateLlmProvider: {
        good: async () => ({ name: await llmProvider(), models: ['n'] }),
        bad: async () => ({ name: 'missing-provider', models: ['n'] }),
        error: 'ResourceNotFound',
      },
      refreshLlmProviderModels: {
        bad: async () => ({ name: 'missing-provider' }),
        error: 'ResourceNotFound',
      },
      deleteLlmProvider: {
        good: async () => ({ name: await llmProvider() }),
        bad: async () => ({ name: 'missing-provider' }),
        error: 'ResourceNotFound',
      },
      getBotModels: { good: async () => ({ id: botId }), bad: missing('bot'), error: 'ResourceNotFound' },
      updateBotModels: {
        good: async () => ({ id: botId, best: `${await llmProvider()}:m` }),
        bad: async () => ({ id: botId, best: 'nowhere:m' }),
        error: 'InvalidPayload',
      },
      // A handoff is opened by a bot (test/handoff.test.ts): here, the queue and one that is not there.
      listWorkspaceHandoffs: {
        good: async () => ({ status: 'assigned' }),
        bad: async () => ({ status: 'waiting' }),
        error: 'InvalidPayload',
      },
      listHandoffs: {
        good: async () => ({ id: botId, status: 'pending' }),
        bad: async () => ({ id: botId, status: 'waiting' }),
        error: 'InvalidPayload',
      },
      getHandoff: {
        bad: async () => ({ id: botId, handoffId: unknownId('hoff') }),
        error: 'ResourceNotFound',
      },
      assignHandoff: {
        bad: async () => ({ id: botId, handoffId: unknownId('hoff') }),
        error: 'ResourceNotFound',
      },
      createHandoffMessage: {
        bad: async () => ({ id: botId, handoffId: unknownId('hoff'), payload: { type: 'text', text: 'hi' } }),
        error: 'ResourceNotFound',
      },
      resolveHandoff: {
        bad: async () => ({ id: botId, handoffId: unknownId('hoff') }),
        error: 'ResourceNotFound',
      },
      listBotVersions: { good: async () => ({ id: botId }), bad: missing('bot'), error: 'ResourceNotFound' },
      getBotVersion: {
        good: versioned,
        bad: async () => ({ id: botId, versionId: unknownId('botver') }),
        error: 'ResourceNotFound',
      },
      getBotPackage: {
        good: versioned,
        bad: async () => ({ id: botId, versionId: unknownId('botver') }),
        error: 'ResourceNotFound',
      },
      getBotDraft: { good: async () => ({ id: botId }), bad: missing('bot'), error: 'ResourceNotFound' },
      validateBotDraft: {
        good: async () => ({ id: botId, files: {} }),
        bad: async () => ({ id: botId, files: { '../bot.json': '{}' } }),
        error: 'InvalidPayload',
      },
      saveBotDraft: {
        good: async () => ({ id: botId, files: {}, layout: {} }),
        bad: async () => ({ id: botId, files: { '/bot.json': '{}' }, layout: {} }),
        error: 'InvalidPayload',
      },
      discardBotDraft: { good: async () => ({ id: botId }), bad: missing('bot'), error: 'ResourceNotFound' },
      // A good deploy of a draft is test/bot-drafts.test.ts's: it needs a package that compiles.
      deployBotDraft: { bad: missing('bot'), error: 'ResourceNotFound' },
      startBotDraftTest: {
        good: async () => ({ id: botId }),
        bad: async () => ({ id: botId, files: { '../bot.json': '{}' } }),
        error: 'InvalidPayload',
      },
      // A good read of a test's turns is test/bot-draft-tests.test.ts's: it needs a test conversation.
      listBotDraftTestTurns: {
        bad: async () => ({ id: botId, messageId: unknownId('msg') }),
        error: 'ResourceNotFound',
      },
      createBotVersion: {
        good: async () => ({ id: (await versioned()).id, name: 'contract', description: 'a note' }),
        bad: async () => ({ id: botId, name: '' }),
        error: 'InvalidPayload',
      },
      deployBotVersion: {
        good: versioned,
        bad: async () => ({ id: botId, versionId: unknownId('botver') }),
        error: 'ResourceNotFound',
      },
      getBotLogs: {
        good: async () => ({ id: botId, timeStart: new Date(Date.now() - day).toISOString() }),
        bad: async () => ({ id: botId, timeStart: 'yesterday-ish' }),
        error: 'InvalidPayload',
      },
      getBotAnalytics: {
        good: async () => ({
          id: botId,
          startDate: new Date(Date.now() - day).toISOString(),
          endDate: new Date().toISOString(),
        }),
        bad: async () => ({
          id: botId,
          startDate: new Date().toISOString(),
          endDate: new Date(Date.now() - day).toISOString(),
        }),
        error: 'InvalidQuery',
      },
    };

    function operation(id: string): AdminOperation {
      return ADMIN_OPERATIONS.find((op) => op.id === id) ?? assert.fail(`no operation ${id}`);
    }

    test('every Admin API operation has a case here, and the official client has all but Parley’s own', () => {
      const missingCases = ADMIN_OPERATIONS.map((op) => op.id).filter((id) => !(id in cases));
      assert.deepEqual(missingCases, []);
      const client = t.client();
      const notInClient = ADMIN_OPERATIONS.map((op) => op.id).filter(
        (id) => typeof Reflect.get(client, id) !== 'function',
      );
      assert.deepEqual(new Set(notInClient), PARLEY_ONLY);
    });

    test('/openapi.json describes exactly the declared operations, with their actor’s credentials', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as OpenApi;
      const described = Object.entries(doc.paths).flatMap(([path, methods]) =>
        path.startsWith('/v1/admin/')
          ? Object.entries(methods).map(([method, op]) => ({
              route: `${method.toUpperCase()} ${path}`,
              id: op.operationId,
              security: op.security,
            }))
          : [],
      );
      const declared = SECURITY_OF_ACTOR.flatMap(([operations, security]) =>
        operations.map((op) => ({
          route: `${op.method} /v1/admin${op.path.replace(/:(\w+)/g, '{$1}')}`,
          id: op.id,
          security,
        })),
      );
      const byRoute = (a: { route: string }, b: { route: string }) => a.route.localeCompare(b.route);
      assert.deepEqual(described.sort(byRoute), declared.sort(byRoute));
    });

    test('bot code’s client offers no Admin API operation', async () => {
      const botOperations = new Set<string>(BOT_OPERATIONS.map((op) => op.id));
      assert.deepEqual(
        ADMIN_OPERATIONS.filter((op) => botOperations.has(op.id)).map((op) => op.id),
        [],
      );
      const inProcess = new BotClient(t.server.domain);
      for (const op of ADMIN_OPERATIONS) {
        await assert.rejects(
          inProcess.call({ botId, workspaceId: t.workspaceId }, op.id, {}),
          (err) =>
            err instanceof ApiError && err.type === 'InvalidPayload' && /not available/.test(err.message),
          op.id,
        );
      }
    });

    for (const op of ADMIN_OPERATIONS) {
      test(`${op.id}: succeeds with good arguments, fails with bad ones`, async (ctx) => {
        const c = cases[op.id];
        if (!c) return ctx.skip('no case (the walk above fails)');
        assert.ok(c.good ?? c.bad, `${op.id}'s case calls it`);
        if (c.good) {
          const answer = await call(op, await c.good());
          assert.ok('ok' in answer, `${op.id} succeeds: ${JSON.stringify(answer)}`);
        }
        if (c.bad) assert.deepEqual(await call(op, await c.bad()), { error: c.error });
      });
    }
  });
}
