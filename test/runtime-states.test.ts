import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, PayloadTooLargeError, ResourceNotFoundError } from '@botpress/client';
import {
  assertId,
  assertTimestamp,
  createTestBot,
  rawRuntime,
  rejectsWith,
  unique,
  unknownId,
  waitFor,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { whileChangedOutside } from './helpers/held-rows.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

type StateType = 'conversation' | 'user' | 'bot' | 'integration' | 'workflow';

for (const store of await testStores()) {
  describe(`runtime states (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let conversationId: string;
    let userId: string;
    let workflowId: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t);
      conversationId = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      userId = (await bot.client.createUser({ tags: {} })).user.id;
      workflowId = (await bot.client.createWorkflow({ name: 'flow', status: 'pending', input: {} })).workflow
        .id;
    });
    after(() => t.close());

    /** A state_expired event of this bot for the state named `name`, once queued. */
    const expiredEventFor = async (name: string) => {
      const { events } = await bot.client.listEvents({ type: 'state_expired', pageSize: 100 });
      return events.find((e) => (e.payload as { state?: { name?: string } }).state?.name === name);
    };

    test('setState then getState on a conversation', async () => {
      const name = unique('st');
      const { state } = await bot.client.setState({
        type: 'conversation',
        id: conversationId,
        name,
        payload: { step: 1, nested: { a: [1, 2] } },
      });
      assertId(state.id, 'state');
      assertTimestamp(state.createdAt, 'createdAt');
      assertTimestamp(state.updatedAt, 'updatedAt');
      assert.equal(state.name, name);
      assert.equal(state.type, 'conversation');
      assert.equal(state.botId, bot.botId);
      assert.equal(state.conversationId, conversationId);
      assert.deepEqual(state.payload, { step: 1, nested: { a: [1, 2] } });
      assert.equal(state.expiresAt ?? undefined, undefined);

      const got = await bot.client.getState({ type: 'conversation', id: conversationId, name });
      assert.deepEqual(got.state.payload, { step: 1, nested: { a: [1, 2] } });
      assert.equal(got.state.id, state.id);
      assert.equal(typeof got.meta.cached, 'boolean');

      const { state: replaced } = await bot.client.setState({
        type: 'conversation',
        id: conversationId,
        name,
        payload: { step: 2 },
      });
      assert.equal(replaced.id, state.id);
      assert.deepEqual(replaced.payload, { step: 2 }, 'setState replaces the payload');
      assert.deepEqual(
        (await bot.client.getState({ type: 'conversation', id: conversationId, name })).state.payload,
        { step: 2 },
      );
    });

    test('states of every type: user, bot (the bot id), workflow, integration, and task', async () => {
      const name = unique('st');
      const targets: [StateType, string][] = [
        ['user', userId],
        ['bot', bot.botId],
        ['workflow', workflowId],
        ['integration', 'intver_01JZZZZZZZZZZZZZZZZZZZZZZZ'],
      ];
      for (const [type, id] of targets) {
        const { state } = await bot.client.setState({ type, id, name, payload: { type } });
        assert.equal(state.type, type);
        assert.equal(state.botId, bot.botId);
        const { state: got } = await bot.client.getState({ type, id, name });
        assert.deepEqual(got.payload, { type }, `${type} state reads back`);
      }
      const user = await bot.client.getState({ type: 'user', id: userId, name });
      assert.equal(user.state.userId, userId);

      // 'task' is accepted by the server even though the client type omits it.
      const task = 'task' as StateType;
      const taskId = 'task_01JZZZZZZZZZZZZZZZZZZZZZZZ';
      await bot.client.setState({ type: task, id: taskId, name, payload: { type: 'task' } });
      assert.deepEqual((await bot.client.getState({ type: task, id: taskId, name })).state.payload, {
        type: 'task',
      });
    });

    test('a state is kept per type, id and name', async () => {
      const name = unique('st');
      const conv2 = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      await bot.client.setState({ type: 'conversation', id: conversationId, name, payload: { who: 'c1' } });
      await bot.client.setState({ type: 'conversation', id: conv2, name, payload: { who: 'c2' } });
      await bot.client.setState({
        type: 'conversation',
        id: conversationId,
        name: `${name}-b`,
        payload: { who: 'b' },
      });
      const read = async (id: string, n: string) =>
        (await bot.client.getState({ type: 'conversation', id, name: n })).state.payload;
      assert.deepEqual(await read(conversationId, name), { who: 'c1' });
      assert.deepEqual(await read(conv2, name), { who: 'c2' });
      assert.deepEqual(await read(conversationId, `${name}-b`), { who: 'b' });
      await rejectsWith(bot.client.getState({ type: 'user', id: userId, name }), ResourceNotFoundError);
    });

    test('getState of a missing state answers ResourceNotFound', async () => {
      await rejectsWith(
        bot.client.getState({ type: 'conversation', id: conversationId, name: unique('none') }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.getState({ type: 'bot', id: bot.botId, name: unique('none') }),
        ResourceNotFoundError,
      );
    });

    test('setState on a conversation, user or workflow that does not exist answers ResourceNotFound', async () => {
      const payload = { a: 1 };
      await rejectsWith(
        bot.client.setState({ type: 'conversation', id: unknownId('conv'), name: 's', payload }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.setState({ type: 'user', id: unknownId('user'), name: 's', payload }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.setState({ type: 'workflow', id: unknownId('wfl'), name: 's', payload }),
        ResourceNotFoundError,
      );
      const other = await createTestBot(t, 'other-bot');
      const theirs = (await other.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      await rejectsWith(
        bot.client.setState({ type: 'conversation', id: theirs, name: 's', payload }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.setState({ type: 'bot', id: other.botId, name: 's', payload }),
        ResourceNotFoundError,
      );
    });

    test('setState with a null payload deletes the state', async () => {
      const name = unique('st');
      await bot.client.setState({ type: 'user', id: userId, name, payload: { x: 1 } });
      await bot.client.setState({ type: 'user', id: userId, name, payload: null });
      await rejectsWith(bot.client.getState({ type: 'user', id: userId, name }), ResourceNotFoundError);
    });

    test('getOrSetState sets once, then answers the stored state (meta.cached)', async () => {
      const name = unique('st');
      const first = await bot.client.getOrSetState({
        type: 'user',
        id: userId,
        name,
        payload: { v: 'first' },
      });
      assert.deepEqual(first.state.payload, { v: 'first' });
      assert.equal(first.meta.cached, false);
      const second = await bot.client.getOrSetState({
        type: 'user',
        id: userId,
        name,
        payload: { v: 'second' },
      });
      assert.deepEqual(second.state.payload, { v: 'first' });
      assert.equal(second.state.id, first.state.id);
      assert.equal(second.meta.cached, true);
      assert.deepEqual((await bot.client.getState({ type: 'user', id: userId, name })).state.payload, {
        v: 'first',
      });
    });

    test('patchState merges the payload shallowly', async () => {
      const name = unique('st');
      await bot.client.setState({
        type: 'bot',
        id: bot.botId,
        name,
        payload: { a: 1, b: 2, nested: { x: 1, y: 1 } },
      });
      const { state } = await bot.client.patchState({
        type: 'bot',
        id: bot.botId,
        name,
        payload: { b: 3, c: 4, nested: { y: 2 } },
      });
      assert.deepEqual(state.payload, { a: 1, b: 3, c: 4, nested: { y: 2 } });
      assert.deepEqual((await bot.client.getState({ type: 'bot', id: bot.botId, name })).state.payload, {
        a: 1,
        b: 3,
        c: 4,
        nested: { y: 2 },
      });
    });

    test(
      'a patch never loses a change committed while it ran',
      { skip: store.name === 'postgres' ? false : 'the row is changed from outside with PostgreSQL' },
      async () => {
        const name = unique('st');
        await bot.client.setState({ type: 'bot', id: bot.botId, name, payload: { a: 1 } });
        assert.ok(t.settings.databaseUrl);
        // Another replica's patch, committed while this one runs.
        await whileChangedOutside(
          t.settings.databaseUrl,
          `update states set payload = '{"a":1,"outside":true}' where bot_id = $1 and name = $2`,
          [bot.botId, name],
          () => bot.client.patchState({ type: 'bot', id: bot.botId, name, payload: { inside: true } }),
        );
        assert.deepEqual((await bot.client.getState({ type: 'bot', id: bot.botId, name })).state.payload, {
          a: 1,
          outside: true,
          inside: true,
        });
      },
    );

    test('expiry: setState with expiry gives expiresAt; setStateExpiry changes and clears it', async () => {
      const name = unique('st');
      const t0 = Date.now();
      const { state } = await bot.client.setState({
        type: 'conversation',
        id: conversationId,
        name,
        payload: { a: 1 },
        expiry: 60_000,
      });
      assert.equal(state.expiry, 60_000);
      assertTimestamp(state.expiresAt, 'expiresAt');
      const at = Date.parse(state.expiresAt!);
      assert.ok(at >= t0 + 60_000 - 1000 && at <= Date.now() + 60_000 + 1000, `expiresAt ${state.expiresAt}`);

      const { state: longer } = await bot.client.setStateExpiry({
        type: 'conversation',
        id: conversationId,
        name,
        expiry: 3_600_000,
      });
      assert.equal(longer.expiry, 3_600_000);
      assert.ok(Date.parse(longer.expiresAt!) >= Date.now() + 3_600_000 - 5000);
      assert.deepEqual(longer.payload, { a: 1 });

      const { state: forever } = await bot.client.setStateExpiry({
        type: 'conversation',
        id: conversationId,
        name,
        expiry: null,
      });
      assert.equal(forever.expiresAt ?? undefined, undefined);
      const { state: got } = await bot.client.getState({ type: 'conversation', id: conversationId, name });
      assert.equal(got.expiresAt ?? undefined, undefined);

      await rejectsWith(
        bot.client.setStateExpiry({
          type: 'conversation',
          id: conversationId,
          name: unique('none'),
          expiry: 1000,
        }),
        ResourceNotFoundError,
      );
    });

    test('setState with expiry null keeps the state, without an expiry', async () => {
      const name = unique('st');
      const { state } = await bot.client.setState({
        type: 'bot',
        id: bot.botId,
        name,
        payload: { a: 1 },
        expiry: null,
      });
      assert.equal(state.expiresAt ?? undefined, undefined);
      const { state: got } = await bot.client.getState({ type: 'bot', id: bot.botId, name });
      assert.deepEqual(got.payload, { a: 1 });
      assert.equal(got.expiresAt ?? undefined, undefined);
    });

    test('a new state named none takes the expiry its definition gives a state of that name and type', async () => {
      // As an SDK bot declares them: `states: { draft: { type: 'conversation', schema, expiry } }`.
      const schema = { type: 'object', properties: {} };
      await t.client().updateBot({
        id: bot.botId,
        states: {
          draft: { type: 'conversation', schema, expiry: 60_000 },
          profile: { type: 'user', schema },
        },
      });
      const before = Date.now();
      const { state: draft } = await bot.client.setState({
        type: 'conversation',
        id: conversationId,
        name: 'draft',
        payload: { text: 'half' },
      });
      assert.equal(draft.expiry, 60_000);
      const expires = Date.parse(draft.expiresAt ?? '');
      assert.ok(expires >= before + 59_000 && expires <= Date.now() + 61_000, `expiresAt ${draft.expiresAt}`);
      // getOrSetState creates it the same way; an expiry given, or null, wins over the definition's.
      const { state: kept } = await bot.client.getOrSetState({
        type: 'conversation',
        id: (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id,
        name: 'draft',
        payload: {},
      });
      assert.equal(kept.expiry, 60_000);
      const { state: own } = await bot.client.setState({
        type: 'conversation',
        id: (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id,
        name: 'draft',
        payload: {},
        expiry: null,
      });
      assert.equal(own.expiresAt ?? undefined, undefined);
      // Another type or name, or a definition without expiry: none.
      const { state: profile } = await bot.client.setState({
        type: 'user',
        id: userId,
        name: 'profile',
        payload: {},
      });
      assert.equal(profile.expiresAt ?? undefined, undefined);
      const { state: other } = await bot.client.setState({
        type: 'user',
        id: userId,
        name: 'draft',
        payload: {},
      });
      assert.equal(other.expiresAt ?? undefined, undefined);
    });

    test('an expired state disappears and a state_expired event is queued for the bot', async () => {
      const name = unique('ttl');
      await bot.client.setState({ type: 'user', id: userId, name, payload: { short: 'lived' }, expiry: 300 });
      await waitFor('the state to expire', async () => {
        try {
          await bot.client.getState({ type: 'user', id: userId, name });
          return false;
        } catch (err) {
          if (err instanceof ResourceNotFoundError) return true;
          throw err;
        }
      });
      const event = await waitFor('the state_expired event', () => expiredEventFor(name));
      assertId(event.id, 'evt');
      assert.equal(event.type, 'state_expired');
      assert.equal(event.status, 'pending');
      const { state } = event.payload as { state: { name: string; type: string; payload: unknown } };
      assert.equal(state.name, name);
      assert.equal(state.type, 'user');
      // Exactly one event per expiry.
      const { events } = await bot.client.listEvents({ type: 'state_expired', pageSize: 100 });
      assert.equal(
        events.filter((e) => (e.payload as { state?: { name?: string } }).state?.name === name).length,
        1,
      );
    });

    test('setStateExpiry on an existing state makes it expire', async () => {
      const name = unique('ttl');
      await bot.client.setState({ type: 'bot', id: bot.botId, name, payload: { a: 1 } });
      await bot.client.setStateExpiry({ type: 'bot', id: bot.botId, name, expiry: 200 });
      await waitFor('the state_expired event', () => expiredEventFor(name));
      await rejectsWith(bot.client.getState({ type: 'bot', id: bot.botId, name }), ResourceNotFoundError);
    });

    test('a state payload over 128 KB answers PayloadTooLarge; under it is accepted', async () => {
      const name = unique('big');
      const small = { data: 'x'.repeat(100 * 1024) };
      await bot.client.setState({ type: 'bot', id: bot.botId, name, payload: small });
      assert.equal(
        ((await bot.client.getState({ type: 'bot', id: bot.botId, name })).state.payload as typeof small).data
          .length,
        100 * 1024,
      );
      const big = { data: 'x'.repeat(129 * 1024) };
      await rejectsWith(
        bot.client.setState({ type: 'bot', id: bot.botId, name, payload: big }),
        PayloadTooLargeError,
      );
      await rejectsWith(
        bot.client.getOrSetState({ type: 'bot', id: bot.botId, name: unique('big'), payload: big }),
        PayloadTooLargeError,
      );
      await rejectsWith(
        bot.client.patchState({ type: 'bot', id: bot.botId, name, payload: big }),
        PayloadTooLargeError,
      );
      // The refused writes left the state as it was.
      assert.equal(
        ((await bot.client.getState({ type: 'bot', id: bot.botId, name })).state.payload as typeof small).data
          .length,
        100 * 1024,
      );
      const raw = await rawRuntime(t, bot, 'POST', `/v1/chat/states/bot/${bot.botId}/${name}`, {
        payload: big,
      });
      assert.equal(raw.status, 413);
      assert.equal((raw.body as { type: string }).type, 'PayloadTooLarge');
    });

    test('invalid state bodies answer InvalidPayload naming the field', async () => {
      await rejectsWith(
        bot.client.setState({ type: 'bot', id: bot.botId, name: 's', payload: 'text' } as never),
        InvalidPayloadError,
        /payload/,
      );
      await rejectsWith(
        bot.client.setState({ type: 'bot', id: bot.botId, name: 's', payload: {}, expiry: 'soon' } as never),
        InvalidPayloadError,
        /expiry/,
      );
    });

    test('state expiry survives a restart of the server', async () => {
      const name = unique('ttl-restart');
      await bot.client.setState({
        type: 'conversation',
        id: conversationId,
        name,
        payload: { a: 1 },
        expiry: 1500,
      });
      await t.restart();
      await waitFor('the state_expired event after the restart', () => expiredEventFor(name));
      await rejectsWith(
        bot.client.getState({ type: 'conversation', id: conversationId, name }),
        ResourceNotFoundError,
      );
    });
  });
}
