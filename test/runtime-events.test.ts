import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import {
  assertId,
  assertNoRepeats,
  assertTimestamp,
  createTestBot,
  ids,
  rawRuntime,
  rejects4xx,
  rejectsWith,
  unique,
  unknownId,
  waitFor,
  walkPages,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`runtime events (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let conversationId: string;
    let userId: string;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t);
      conversationId = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      userId = (await bot.client.createUser({ tags: {} })).user.id;
    });
    after(() => t.close());

    const statusOf = async (id: string) => (await bot.client.getEvent({ id })).event.status;

    test('createEvent answers a pending event, and getEvent reads it back', async () => {
      const { event } = await bot.client.createEvent({
        type: 'chat:custom',
        payload: { hello: 'world', n: [1, 2] },
        conversationId,
        userId,
      });
      assertId(event.id, 'evt');
      assertTimestamp(event.createdAt, 'createdAt');
      assert.equal(event.type, 'chat:custom');
      assert.deepEqual(event.payload, { hello: 'world', n: [1, 2] });
      assert.equal(event.conversationId, conversationId);
      assert.equal(event.userId, userId);
      assert.equal(event.status, 'pending');
      assert.equal(event.failureReason, null);
      const got = await bot.client.getEvent({ id: event.id });
      assert.deepEqual(got.event, event);
    });

    test('createEvent answers 201', async () => {
      const res = await rawRuntime(t, bot, 'POST', '/v1/chat/events', { type: 'ping', payload: {} });
      assert.equal(res.status, 201);
      const { event } = res.body as { event: { id: string; status: string } };
      assertId(event.id, 'evt');
      assert.equal(event.status, 'pending');
      assert.equal((await rawRuntime(t, bot, 'GET', `/v1/chat/events/${event.id}`)).status, 200);
    });

    test('unknown ids answer ResourceNotFound', async () => {
      await rejectsWith(bot.client.getEvent({ id: unknownId('evt') }), ResourceNotFoundError);
      await rejectsWith(bot.client.cancelScheduledEvent({ id: unknownId('evt') }), ResourceNotFoundError);
      await rejectsWith(
        bot.client.createEvent({ type: 'x', payload: {}, conversationId: unknownId('conv') }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.createEvent({ type: 'x', payload: {}, userId: unknownId('user') }),
        ResourceNotFoundError,
      );
    });

    test('invalid event bodies answer InvalidPayload naming the field', async () => {
      await rejectsWith(bot.client.createEvent({ payload: {} } as never), InvalidPayloadError, /type/);
      await rejectsWith(
        bot.client.createEvent({ type: 'x', payload: 'text' } as never),
        InvalidPayloadError,
        /payload/,
      );
      await rejectsWith(
        bot.client.createEvent({ type: 'x', payload: {}, schedule: { delay: 'soon' } } as never),
        InvalidPayloadError,
        /delay|schedule/,
      );
    });

    test('listEvents filters by type, conversation, user, message and status, newest first', async () => {
      const kind = unique('kind');
      const conv2 = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
      const { message } = await bot.client.createMessage({
        conversationId,
        userId,
        type: 'text',
        payload: { text: 'hi' },
        tags: {},
      });
      const e1 = (await bot.client.createEvent({ type: kind, payload: { i: 1 }, conversationId })).event.id;
      const e2 = (
        await bot.client.createEvent({ type: kind, payload: { i: 2 }, conversationId: conv2, userId })
      ).event.id;
      const e3 = (
        await bot.client.createEvent({ type: kind, payload: { i: 3 }, conversationId, messageId: message.id })
      ).event.id;
      const e4 = (
        await bot.client.createEvent({ type: kind, payload: { i: 4 }, schedule: { delay: 60_000 } })
      ).event.id;

      assert.deepEqual(ids((await bot.client.listEvents({ type: kind })).events), [e4, e3, e2, e1]);
      assert.deepEqual(ids((await bot.client.listEvents({ type: kind, conversationId })).events), [e3, e1]);
      assert.deepEqual(ids((await bot.client.listEvents({ type: kind, userId })).events), [e2]);
      assert.deepEqual(ids((await bot.client.listEvents({ type: kind, messageId: message.id })).events), [
        e3,
      ]);
      assert.deepEqual(ids((await bot.client.listEvents({ type: kind, status: 'scheduled' })).events), [e4]);
      assert.deepEqual(ids((await bot.client.listEvents({ type: kind, status: 'pending' })).events), [
        e3,
        e2,
        e1,
      ]);

      const p1 = await bot.client.listEvents({ type: kind, pageSize: 3 });
      assert.deepEqual(ids(p1.events), [e4, e3, e2]);
      assert.ok(p1.meta.nextToken);
      const p2 = await bot.client.listEvents({ type: kind, pageSize: 3, nextToken: p1.meta.nextToken });
      assert.deepEqual(ids(p2.events), [e1]);
      assert.equal(p2.meta.nextToken, undefined);
      await bot.client.cancelScheduledEvent({ id: e4 });
    });

    test('a walk over events with pageSize 5 never repeats or skips while events are created', async () => {
      const kind = unique('walk');
      const stable: string[] = [];
      for (let i = 0; i < 17; i++)
        stable.push((await bot.client.createEvent({ type: kind, payload: { i } })).event.id);
      const pages = await walkPages(
        async (nextToken) => {
          const page = await bot.client.listEvents({ type: kind, pageSize: 5, nextToken });
          return { ids: ids(page.events), nextToken: page.meta.nextToken };
        },
        async () => {
          await bot.client.createEvent({ type: kind, payload: { during: true } });
        },
      );
      const served = pages.flat();
      assertNoRepeats(served);
      assert.deepEqual(
        stable.filter((id) => !served.includes(id)),
        [],
      );
    });

    test('an event scheduled with a delay is scheduled, then pending once due', async () => {
      const { event } = await bot.client.createEvent({
        type: 'reminder',
        payload: { n: 1 },
        conversationId,
        schedule: { delay: 700 },
      });
      assertId(event.id, 'evt');
      assert.equal(event.status, 'scheduled');
      assert.equal(await statusOf(event.id), 'scheduled');
      const scheduled = await bot.client.listEvents({ type: 'reminder', status: 'scheduled' });
      assert.ok(ids(scheduled.events).includes(event.id));

      await waitFor('the delayed event to fire', async () => (await statusOf(event.id)) === 'pending');
      const { event: fired } = await bot.client.getEvent({ id: event.id });
      assert.deepEqual(fired.payload, { n: 1 });
      assert.equal(fired.conversationId, conversationId);
      const pending = await bot.client.listEvents({ type: 'reminder', status: 'pending' });
      assert.ok(ids(pending.events).includes(event.id));
    });

    test('an event scheduled at a dateTime is scheduled, then pending once due', async () => {
      const dateTime = new Date(Date.now() + 700).toISOString();
      const { event } = await bot.client.createEvent({
        type: 'at-time',
        payload: {},
        schedule: { dateTime },
      });
      assert.equal(event.status, 'scheduled');
      await waitFor('the timed event to fire', async () => (await statusOf(event.id)) === 'pending');
      assert.ok(Date.now() >= Date.parse(dateTime), 'it did not fire early');
    });

    test('cancelScheduledEvent cancels: the event is canceled and never fires', async () => {
      const { event: doomed } = await bot.client.createEvent({
        type: 'cancel-me',
        payload: {},
        schedule: { delay: 600 },
      });
      const { event: control } = await bot.client.createEvent({
        type: 'control',
        payload: {},
        schedule: { delay: 600 },
      });
      assert.deepEqual(await bot.client.cancelScheduledEvent({ id: doomed.id }), {});
      assert.equal(await statusOf(doomed.id), 'canceled');
      // Once the control event due at the same time has fired, the cancelled one would have too.
      await waitFor('the control event to fire', async () => (await statusOf(control.id)) === 'pending');
      assert.equal(await statusOf(doomed.id), 'canceled');
    });

    test('cancelling an event that is not scheduled is refused', async () => {
      const { event } = await bot.client.createEvent({ type: 'now', payload: {} });
      await rejects4xx(bot.client.cancelScheduledEvent({ id: event.id }));
      assert.equal(await statusOf(event.id), 'pending');

      const { event: scheduled } = await bot.client.createEvent({
        type: 'twice',
        payload: {},
        schedule: { delay: 60_000 },
      });
      await bot.client.cancelScheduledEvent({ id: scheduled.id });
      await rejects4xx(bot.client.cancelScheduledEvent({ id: scheduled.id }));
      assert.equal(await statusOf(scheduled.id), 'canceled');
    });

    test('events belong to one bot', async () => {
      const other = await createTestBot(t, 'other-bot');
      const { event } = await bot.client.createEvent({ type: 'mine', payload: {} });
      await rejectsWith(other.client.getEvent({ id: event.id }), ResourceNotFoundError);
      await rejectsWith(other.client.cancelScheduledEvent({ id: event.id }), ResourceNotFoundError);
      const { events } = await other.client.listEvents({ type: 'mine' });
      assert.deepEqual(events, []);
    });

    test('a scheduled event fires after a restart of the server', async () => {
      const { event } = await bot.client.createEvent({
        type: 'survives',
        payload: { across: 'restart' },
        schedule: { delay: 1500 },
      });
      assert.equal(event.status, 'scheduled');
      await t.restart();
      const { event: stored } = await bot.client.getEvent({ id: event.id });
      assert.ok(['scheduled', 'pending'].includes(stored.status), `status after restart: ${stored.status}`);
      await waitFor(
        'the scheduled event to fire after the restart',
        async () => (await statusOf(event.id)) === 'pending',
      );
      const { event: fired } = await bot.client.getEvent({ id: event.id });
      assert.deepEqual(fired.payload, { across: 'restart' });
    });
  });
}
