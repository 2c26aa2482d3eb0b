import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '@botpress/client';
import { BOT_OPERATIONS } from '../src/contract/bot-operations.ts';
import { APIS, mountOf } from '../src/contract/apis.ts';
import { COGNITIVE_OPERATIONS } from '../src/contract/cognitive/index.ts';
import { ApiError } from '../src/domain/shared/errors.ts';
import { BotClient } from '../src/engine/bot-client.ts';
import type { Json } from '../src/engine/sandbox/types.ts';
import { createTestBot, rawRuntime, unique, unknownId } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';

/**
 * Every operation bot code can call answers the same through HTTP (the official client) and through
 * the in-process client: the same answer for the same input (ids and times of records each call
 * created aside), and the same error type for a bad one. Each operation of the table needs a case
 * here: a new operation without one fails the walk. The official client has no method for the Cognitive
 * API (`@botpress/cognitive` posts to it with the client's connection), so its HTTP side is the route
 * itself, with the bot's key.
 */

type Args = Record<string, Json>;

interface Case {
  /** Arguments that succeed, made fresh for each of the two calls (a delete needs its own record). */
  good(): Promise<Args>;
  /** Arguments that fail, and the error type both ways must give. */
  bad?: () => Promise<Args>;
  error?: string;
}

/** Ids and times differ between two calls that each created a record: the rest must be equal. */
const ID = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** What `unique()` makes: each case's fresh tag values and names. */
const UNIQUE = /^[a-z]+-[0-9a-z]+-[0-9a-z]{1,8}$/;
/** What `freshTable()` names its tables (table names take no dashes). */
const TABLE_NAME = /^Parity_[0-9a-z]+$/;
/** URLs handed out (signed file URLs) name their record and expiry. */
const URL_TEXT = /^https?:\/\//;
/** What differs between two model calls of the same input: how long each took. */
const TIMINGS = new Set(['latency', 'ttft']);
function masked(value: unknown): unknown {
  if (typeof value === 'string') {
    if (ID.test(value)) return '<id>';
    if (URL_TEXT.test(value)) return '<url>';
    if (TIME.test(value)) return '<time>';
    return UNIQUE.test(value) || TABLE_NAME.test(value) ? '<unique>' : value;
  }
  if (Array.isArray(value)) return value.map(masked);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'nextToken' ? '<token>' : TIMINGS.has(k) ? '<timing>' : masked(v),
      ]),
    );
  }
  return value;
}

/** A route's error answer: its body's `type`. */
class RouteError extends Error {
  readonly type: string;
  constructor(status: number, body: unknown) {
    super(`HTTP ${status}`);
    const type: unknown = body && typeof body === 'object' ? Reflect.get(body, 'type') : undefined;
    this.type = typeof type === 'string' ? type : `HTTP ${status}`;
  }
}

async function outcome(call: () => Promise<unknown>): Promise<{ ok: unknown } | { error: string }> {
  try {
    return { ok: masked(JSON.parse(JSON.stringify(await call()))) };
  } catch (err) {
    if (err instanceof ApiError) return { error: err.type };
    if (isApiError(err) || err instanceof RouteError) return { error: err.type };
    throw err;
  }
}

for (const store of await testStores()) {
  describe(`one contract: HTTP and bot code answer alike (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let inProcess: BotClient;
    let models: ModelServer;
    before(async () => {
      models = await startModelServer({ transcript: 'parity words' });
      t = await startTestServer(store, parleySettings(models));
      bot = await createTestBot(t, 'parity-bot');
      inProcess = new BotClient(t.server.domain);
    });
    after(async () => {
      await t.close();
      await models.close();
    });

    const user = async () => (await bot.client.createUser({ tags: { k: unique() }, name: 'parity' })).user.id;
    const conversation = async () =>
      (await bot.client.createConversation({ channel: 'parity', tags: { k: unique() } })).conversation.id;
    const message = async () => {
      const conversationId = await conversation();
      const userId = await user();
      const { message: m } = await bot.client.createMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'hi' },
        tags: {},
      });
      return { conversationId, userId, messageId: m.id };
    };
    const workflow = async () =>
      (await bot.client.createWorkflow({ name: 'parity', status: 'in_progress', tags: {} })).workflow.id;
    const scheduled = async () =>
      (
        await bot.client.createEvent({
          type: 'later',
          payload: {},
          schedule: { delay: 3_600_000 },
        })
      ).event.id;
    const stateKey = async () => ({ type: 'user' as const, id: await user(), name: unique('s') });
    const withState = async () => {
      const key = await stateKey();
      await bot.client.setState({ ...key, payload: { a: 1 } });
      return key;
    };
    const missing = (prefix: string) => async () => ({ id: unknownId(prefix) });
    const uploaded = async () =>
      (await bot.client.uploadFile({ key: unique('key'), content: 'parity', tags: { parity: 'yes' } })).file;
    const knowledgeBase = async () =>
      (await bot.client.createKnowledgeBase({ name: 'parity' })).knowledgeBase.id;
    let tables = 0;
    /** A new table of two rows (ids 1 and 2), keyed by `sku`: each call of a case works on its own. */
    const freshTable = async () => {
      const name = `Parity_${(++tables).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
      await bot.client.createTable({
        name,
        schema: { sku: 'a', price: 1, tags: ['x'] },
        keyColumn: 'sku',
        tags: { parity: 'yes' },
      });
      await bot.client.createTableRows({
        table: name,
        rows: [
          { sku: 'a', price: 1, tags: ['x'] },
          { sku: 'b', price: 2, tags: [] },
        ],
      });
      return name;
    };

    const cases: Record<string, Case> = {
      callAction: {
        good: async () => ({
          type: 'chat:sendEvent',
          input: { conversationId: await conversation(), payload: {} },
        }),
        bad: async () => ({ type: 'nope', input: {} }),
        error: 'ResourceNotFound',
      },
      createConversation: {
        good: async () => ({ channel: 'parity', tags: { a: 'b' } }),
        bad: async () => ({ tags: {} }),
        error: 'InvalidPayload',
      },
      getConversation: {
        good: async () => ({ id: await conversation() }),
        bad: missing('conv'),
        error: 'ResourceNotFound',
      },
      listConversations: {
        good: async () => ({ tags: { none: unique() } }),
        bad: async () => ({ pageSize: 1000 }),
        error: 'InvalidPayload',
      },
      getOrCreateConversation: {
        good: async () => ({ channel: 'parity', tags: { fixed: unique() }, discriminateByTags: ['fixed'] }),
        bad: async () => ({ tags: {} }),
        error: 'InvalidPayload',
      },
      updateConversation: {
        good: async () => ({ id: await conversation(), tags: { x: 'y' } }),
        bad: missing('conv'),
        error: 'ResourceNotFound',
      },
      deleteConversation: {
        good: async () => ({ id: await conversation() }),
        bad: missing('conv'),
        error: 'ResourceNotFound',
      },
      listParticipants: {
        good: async () => ({ id: (await message()).conversationId }),
        bad: missing('conv'),
        error: 'ResourceNotFound',
      },
      addParticipant: {
        good: async () => ({ id: await conversation(), userId: await user() }),
        bad: async () => ({ id: await conversation(), userId: unknownId('user') }),
        error: 'ResourceNotFound',
      },
      getParticipant: {
        good: async () => {
          const m = await message();
          return { id: m.conversationId, userId: m.userId };
        },
        bad: async () => ({ id: await conversation(), userId: await user() }),
        error: 'ResourceNotFound',
      },
      removeParticipant: {
        good: async () => {
          const m = await message();
          return { id: m.conversationId, userId: m.userId };
        },
        bad: async () => ({ id: await conversation(), userId: await user() }),
        error: 'ResourceNotFound',
      },
      createUser: {
        good: async () => ({ tags: { a: 'b' }, name: 'Ada' }),
        bad: async () => ({ tags: {}, name: 5 }),
        error: 'InvalidPayload',
      },
      getUser: { good: async () => ({ id: await user() }), bad: missing('user'), error: 'ResourceNotFound' },
      listUsers: {
        good: async () => ({ conversationId: (await message()).conversationId }),
        bad: async () => ({ pageSize: 0 }),
        error: 'InvalidPayload',
      },
      getOrCreateUser: {
        good: async () => ({ tags: { fixed: unique() } }),
        bad: async () => ({ tags: { a: 5 } }),
        error: 'InvalidPayload',
      },
      updateUser: {
        good: async () => ({ id: await user(), name: 'Grace' }),
        bad: missing('user'),
        error: 'ResourceNotFound',
      },
      deleteUser: {
        good: async () => ({ id: await user() }),
        bad: missing('user'),
        error: 'ResourceNotFound',
      },
      createMessage: {
        good: async () => ({
          conversationId: await conversation(),
          userId: bot.botId,
          type: 'text',
          payload: { text: 'from the bot' },
          tags: {},
        }),
        bad: async () => ({
          conversationId: unknownId('conv'),
          userId: bot.botId,
          type: 'text',
          payload: {},
        }),
        error: 'ResourceNotFound',
      },
      getOrCreateMessage: {
        good: async () => ({
          conversationId: await conversation(),
          userId: bot.botId,
          type: 'text',
          payload: { text: 'x' },
          tags: { once: 'parity' },
        }),
        bad: async () => ({ userId: bot.botId, type: 'text' }),
        error: 'InvalidPayload',
      },
      getMessage: {
        good: async () => ({ id: (await message()).messageId }),
        bad: missing('msg'),
        error: 'ResourceNotFound',
      },
      updateMessage: {
        good: async () => ({ id: (await message()).messageId, tags: { seen: 'yes' } }),
        bad: missing('msg'),
        error: 'ResourceNotFound',
      },
      listMessages: {
        good: async () => ({ conversationId: (await message()).conversationId }),
        bad: async () => ({ nextToken: 'not-a-token' }),
        error: 'InvalidPayload',
      },
      deleteMessage: {
        good: async () => ({ id: (await message()).messageId }),
        bad: missing('msg'),
        error: 'ResourceNotFound',
      },
      initializeIncomingMessage: {
        good: async () => {
          const ext = unique();
          return {
            user: { tags: { ext }, discriminateByTags: ['ext'] },
            conversation: { channel: 'parity', tags: { ext }, discriminateByTags: ['ext'] },
          };
        },
        bad: async () => ({ userId: unknownId('user') }),
        error: 'ResourceNotFound',
      },
      importMessages: {
        good: async () => {
          const m = await message();
          return {
            messages: [
              {
                conversationId: m.conversationId,
                userId: m.userId,
                type: 'text',
                payload: { text: 'old' },
                createdAt: '2020-01-01T00:00:00.000Z',
              },
            ],
          };
        },
        bad: async () => ({ messages: [{ type: 'text' }] }),
        error: 'InvalidPayload',
      },
      createEvent: {
        good: async () => ({ type: 'custom', payload: { a: 1 }, conversationId: await conversation() }),
        bad: async () => ({ type: 'custom', payload: {}, conversationId: unknownId('conv') }),
        error: 'ResourceNotFound',
      },
      getEvent: {
        good: async () => ({ id: await scheduled() }),
        bad: missing('evt'),
        error: 'ResourceNotFound',
      },
      listEvents: {
        good: async () => ({ conversationId: await conversation() }),
        bad: async () => ({ status: 'sleeping' }),
        error: 'InvalidPayload',
      },
      cancelScheduledEvent: {
        good: async () => ({ id: await scheduled() }),
        bad: missing('evt'),
        error: 'ResourceNotFound',
      },
      getState: { good: withState, bad: stateKey, error: 'ResourceNotFound' },
      setState: {
        good: async () => ({ ...(await stateKey()), payload: { b: 2 } }),
        bad: async () => ({ ...(await stateKey()), type: 'planet', payload: {} }),
        error: 'InvalidPayload',
      },
      getOrSetState: {
        good: async () => ({ ...(await withState()), payload: { c: 3 } }),
        bad: async () => ({ type: 'user', id: unknownId('user'), name: 'x', payload: {} }),
        error: 'ResourceNotFound',
      },
      patchState: {
        good: async () => ({ ...(await withState()), payload: { d: 4 } }),
        bad: async () => ({ ...(await stateKey()), payload: { d: 4 } }),
        error: 'ResourceNotFound',
      },
      setStateExpiry: {
        good: async () => ({ ...(await withState()), expiry: 60_000 }),
        bad: async () => ({ ...(await stateKey()), expiry: 60_000 }),
        error: 'ResourceNotFound',
      },
      createWorkflow: {
        good: async () => ({ name: 'w', status: 'pending', tags: {} }),
        bad: async () => ({ name: 'w', status: 'completed' }),
        error: 'InvalidPayload',
      },
      getWorkflow: {
        good: async () => ({ id: await workflow() }),
        bad: missing('wfl'),
        error: 'ResourceNotFound',
      },
      updateWorkflow: {
        good: async () => ({ id: await workflow(), status: 'completed', output: { done: true } }),
        bad: missing('wfl'),
        error: 'ResourceNotFound',
      },
      deleteWorkflow: {
        good: async () => ({ id: await workflow() }),
        bad: missing('wfl'),
        error: 'ResourceNotFound',
      },
      listWorkflows: {
        good: async () => ({ name: unique('none') }),
        bad: async () => ({ statuses: ['sleeping'] }),
        error: 'InvalidPayload',
      },
      getOrCreateWorkflow: {
        good: async () => ({ name: unique('w'), status: 'pending', tags: {}, discriminateByTags: [] }),
        bad: async () => ({ name: 'w' }),
        error: 'InvalidPayload',
      },
      listTagValues: {
        good: async () => ({ key: 'k', type: 'user' }),
        bad: async () => ({ key: 'k', type: 'planet' }),
        error: 'InvalidPayload',
      },
      trackAnalytics: {
        good: async () => ({ name: 'parity', count: 1 }),
        bad: async () => ({ name: 'parity', count: 'one' }),
        error: 'InvalidPayload',
      },
      captureObservation: {
        good: async () => ({ name: 'parity', data: { a: 1 } }),
        bad: async () => ({ name: 'parity' }),
        error: 'InvalidPayload',
      },
      upsertFile: {
        good: async () => ({ key: unique('key'), size: 3, tags: { a: 'b' }, metadata: { m: 1 } }),
        bad: async () => ({ key: 'no-size' }),
        error: 'InvalidPayload',
      },
      getFile: {
        good: async () => ({ id: (await uploaded()).id }),
        bad: missing('file'),
        error: 'ResourceNotFound',
      },
      listFiles: {
        good: async () => ({ tags: { parity: 'yes', none: { exists: false } }, pageSize: 1 }),
        bad: async () => ({ sortField: 'colour' }),
        error: 'InvalidPayload',
      },
      updateFileMetadata: {
        good: async () => ({ id: (await uploaded()).id, metadata: { a: 1 }, tags: { parity: null } }),
        bad: missing('file'),
        error: 'ResourceNotFound',
      },
      deleteFile: {
        good: async () => ({ id: (await uploaded()).id }),
        bad: missing('file'),
        error: 'ResourceNotFound',
      },
      copyFile: {
        good: async () => ({ idOrKey: (await uploaded()).id, destinationKey: unique('copy') }),
        bad: async () => {
          const file = await uploaded();
          return { idOrKey: file.id, destinationKey: file.key };
        },
        error: 'AlreadyExists',
      },
      searchFiles: {
        good: async () => ({ query: 'parity', tags: { parity: 'yes' }, withContext: true }),
        bad: async () => ({ query: 'parity', limit: 100 }),
        error: 'InvalidPayload',
      },
      listFilePassages: {
        good: async () => ({ id: (await uploaded()).id }),
        bad: missing('file'),
        error: 'ResourceNotFound',
      },
      setFilePassages: {
        good: async () => ({
          id: (await uploaded()).id,
          passages: [{ content: 'parity', type: 'paragraph' }],
        }),
        bad: async () => ({ ...(await missing('file')()), passages: [] }),
        error: 'ResourceNotFound',
      },
      listFileTags: {
        good: async () => ({}),
        bad: async () => ({ nextToken: 'not-a-token' }),
        error: 'InvalidPayload',
      },
      listFileTagValues: {
        good: async () => ({ tag: 'parity' }),
        bad: async () => ({ tag: 'parity', pageSize: 0 }),
        error: 'InvalidPayload',
      },
      createKnowledgeBase: {
        good: async () => ({ name: 'parity', tags: { a: 'b' } }),
        bad: async () => ({ name: '' }),
        error: 'InvalidPayload',
      },
      updateKnowledgeBase: {
        good: async () => ({ id: await knowledgeBase(), name: 'renamed', tags: { a: 'b' } }),
        bad: async () => ({ id: unknownId('kb'), name: 'renamed' }),
        error: 'ResourceNotFound',
      },
      deleteKnowledgeBase: {
        good: async () => ({ id: await knowledgeBase() }),
        bad: missing('kb'),
        error: 'ResourceNotFound',
      },
      listKnowledgeBases: {
        good: async () => ({ tags: { none: unique() } }),
        bad: async () => ({ tags: { k: { near: 'x' } } }),
        error: 'InvalidPayload',
      },
      createTable: {
        good: async () => ({ name: `Parity_${Math.random().toString(36).slice(2, 10)}`, schema: { a: 'x' } }),
        bad: async () => ({
          name: 'Parity_bad',
          schema: { type: 'object', properties: { a: { type: 'planet' } } },
        }),
        error: 'InvalidJsonSchema',
      },
      getTable: {
        good: async () => ({ table: await freshTable() }),
        bad: async () => ({ table: unknownId('table') }),
        error: 'ResourceNotFound',
      },
      getOrCreateTable: {
        good: async () => ({ table: `Parity_${Math.random().toString(36).slice(2, 10)}`, schema: { a: 1 } }),
        bad: async () => ({ table: 'Parity_x', schema: { a: null } }),
        error: 'InvalidJsonSchema',
      },
      updateTable: {
        good: async () => ({
          table: await freshTable(),
          schema: { note: 'x', price: null },
          tags: { extra: 'y' },
        }),
        bad: async () => ({ table: await freshTable(), factor: 31 }),
        error: 'InvalidPayload',
      },
      renameTableColumn: {
        good: async () => ({ table: await freshTable(), name: 'price', newName: 'cost' }),
        bad: async () => ({ table: await freshTable(), name: 'nope', newName: 'cost' }),
        error: 'InvalidPayload',
      },
      deleteTable: {
        good: async () => ({ table: await freshTable() }),
        bad: async () => ({ table: unknownId('table') }),
        error: 'ResourceNotFound',
      },
      listTables: {
        good: async () => ({ tags: { none: unique() } }),
        bad: async () => ({ tags: { k: { near: 'x' } } }),
        error: 'InvalidPayload',
      },
      duplicateTable: {
        good: async () => ({
          sourceTableId: await freshTable(),
          schemaOnly: true,
          tableName: `Parity_${Math.random().toString(36).slice(2, 10)}`,
        }),
        bad: async () => ({ sourceTableId: unknownId('table') }),
        error: 'ResourceNotFound',
      },
      exportTable: {
        good: async () => ({ table: await freshTable(), format: 'csv', compress: false }),
        bad: async () => ({ table: await freshTable(), format: 'xml' }),
        error: 'InvalidPayload',
      },
      importTable: {
        good: async () => ({ table: await freshTable(), fileId: (await uploaded()).id }),
        bad: async () => ({ table: await freshTable(), fileId: unknownId('file') }),
        error: 'ResourceNotFound',
      },
      getTableJobs: {
        good: async () => ({ table: await freshTable() }),
        bad: async () => ({ table: unknownId('table') }),
        error: 'ResourceNotFound',
      },
      getTableRow: {
        good: async () => ({ table: await freshTable(), id: 2 }),
        bad: async () => ({ table: await freshTable(), id: 99 }),
        error: 'ResourceNotFound',
      },
      findTableRows: {
        good: async () => ({ table: await freshTable(), filter: { price: { $gte: 2 } }, select: ['sku'] }),
        bad: async () => ({ table: await freshTable(), filter: { price: { gte: 2 } } }),
        error: 'InvalidQuery',
      },
      createTableRows: {
        good: async () => ({
          table: await freshTable(),
          rows: [
            { sku: 'c', price: 3 },
            { sku: 'a', price: 4 },
            { sku: 'd', price: 'x' },
          ],
        }),
        bad: async () => ({ table: await freshTable(), rows: [] }),
        error: 'InvalidPayload',
      },
      updateTableRows: {
        good: async () => ({
          table: await freshTable(),
          rows: [
            { id: 1, price: 10 },
            { id: 9, price: 1 },
          ],
        }),
        bad: async () => ({ table: await freshTable(), rows: [{ price: 1 }] }),
        error: 'InvalidPayload',
      },
      upsertTableRows: {
        good: async () => ({
          table: await freshTable(),
          keyColumn: 'sku',
          rows: [
            { sku: 'a', price: 5 },
            { sku: 'z', price: 6 },
          ],
        }),
        bad: async () => ({ table: await freshTable(), keyColumn: 'colour', rows: [{ sku: 'a' }] }),
        error: 'InvalidPayload',
      },
      deleteTableRows: {
        good: async () => ({ table: await freshTable(), filter: { sku: 'a' } }),
        bad: async () => ({ table: await freshTable(), ids: [1], deleteAllRows: true }),
        error: 'InvalidPayload',
      },
      generateText: {
        // Skipping the cache: each way calls the model (the second would otherwise be a cache hit).
        good: async () => ({
          model: 'fast',
          messages: [{ role: 'user', type: 'text', content: 'parity' }],
          options: { skipCache: true },
        }),
        bad: async () => ({ messages: [{ role: 'robot', content: 'parity' }] }),
        error: 'InvalidPayload',
      },
      listModels: { good: async () => ({}) },
      transcribeAudio: {
        good: async () => ({
          url: `data:audio/wav;base64,${Buffer.from('parity audio').toString('base64')}`,
          model: 'default:test-transcribe',
          options: { skipCache: true },
        }),
        bad: async () => ({ url: '' }),
        error: 'InvalidPayload',
      },
      configureIntegration: {
        good: async () => ({ identifier: 'x' }),
        bad: async () => ({ identifier: 5 }),
        error: 'InvalidPayload',
      },
    };

    const cognitive = new Set<string>(COGNITIVE_OPERATIONS.map((op) => op.id));
    const viaOfficialClient = (id: string) => {
      const method: unknown = Reflect.get(bot.client, id);
      assert.equal(typeof method, 'function', `the official client has ${id}`);
      return (args: Args) => async (): Promise<unknown> =>
        Reflect.apply(method as (args: Args) => Promise<unknown>, bot.client, [args]);
    };
    /** The operation's route called with the bot's key: the body, or the query of a GET. */
    const viaRoute = (op: { method: string; path: string }) => (args: Args) => async (): Promise<unknown> => {
      const body = op.method === 'GET' ? undefined : args;
      const res = await rawRuntime(t, bot, op.method, `${mountOf(APIS.cognitive)}${op.path}`, body);
      if (res.status >= 400) throw new RouteError(res.status, res.body);
      return res.body;
    };

    test('every operation bot code can call has a case here', () => {
      const missingCases = BOT_OPERATIONS.map((op) => op.id).filter((id) => !(id in cases));
      assert.deepEqual(missingCases, []);
    });

    for (const op of BOT_OPERATIONS) {
      test(`${op.id}: the same answer and the same error both ways`, async (ctx) => {
        const c = cases[op.id];
        if (!c) return ctx.skip('no case (the walk above fails)');
        const actor = { botId: bot.botId, workspaceId: t.workspaceId };
        const viaHttp = cognitive.has(op.id) ? viaRoute(op) : viaOfficialClient(op.id);
        const viaBotCode = (args: Args) => () => inProcess.call(actor, op.id, args);

        const http = await outcome(viaHttp(await c.good()));
        const botCode = await outcome(viaBotCode(await c.good()));
        assert.ok('ok' in http, `${op.id} succeeds over HTTP: ${JSON.stringify(http)}`);
        assert.deepEqual(botCode, http);

        if (c.bad) {
          const httpError = await outcome(viaHttp(await c.bad()));
          const botCodeError = await outcome(viaBotCode(await c.bad()));
          assert.deepEqual(httpError, { error: c.error });
          assert.deepEqual(botCodeError, httpError);
        }
      });
    }
  });
}
