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
  rejectsWith,
  sleep,
  unique,
  unknownId,
  walkPages,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

for (const store of await testStores()) {
  describe(`runtime users (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t);
    });
    after(() => t.close());

    test('createUser answers the user, and getUser reads it back', async () => {
      const { user } = await bot.client.createUser({
        name: 'Ada Lovelace',
        pictureUrl: 'https://example.com/ada.png',
        tags: { email: 'ada@example.com', 'chat:id': 'ext-1' },
        properties: { plan: 'pro' },
      });
      assertId(user.id, 'user');
      assertTimestamp(user.createdAt, 'createdAt');
      assertTimestamp(user.updatedAt, 'updatedAt');
      assert.equal(user.name, 'Ada Lovelace');
      assert.equal(user.pictureUrl, 'https://example.com/ada.png');
      assert.deepEqual(user.tags, { email: 'ada@example.com', 'chat:id': 'ext-1' });
      assert.deepEqual(user.properties, { plan: 'pro' });

      const got = await bot.client.getUser({ id: user.id });
      assert.deepEqual(got.user, user);
    });

    test('createUser answers 201', async () => {
      const res = await rawRuntime(t, bot, 'POST', '/v1/chat/users', { tags: {}, name: 'raw' });
      assert.equal(res.status, 201);
      const { user } = res.body as { user: { id: string; name: string } };
      assertId(user.id, 'user');
      assert.equal(user.name, 'raw');
      assert.equal((await rawRuntime(t, bot, 'GET', `/v1/chat/users/${user.id}`)).status, 200);
    });

    test('an unknown user id answers ResourceNotFound on get, update and delete', async () => {
      const id = unknownId('user');
      await rejectsWith(bot.client.getUser({ id }), ResourceNotFoundError);
      await rejectsWith(bot.client.updateUser({ id, name: 'x' }), ResourceNotFoundError);
      await rejectsWith(bot.client.deleteUser({ id }), ResourceNotFoundError);
    });

    test('invalid user bodies answer InvalidPayload naming the field', async () => {
      await rejectsWith(
        bot.client.createUser({ tags: {}, name: 'n'.repeat(201) }),
        InvalidPayloadError,
        /name/,
      );
      await rejectsWith(bot.client.createUser({ tags: 'nope' } as never), InvalidPayloadError, /tags/);
    });

    test('a property value of the wrong JSON type is refused, not coerced', async () => {
      await rejectsWith(
        bot.client.createUser({ tags: {}, properties: { a: 5 } } as never),
        InvalidPayloadError,
        /properties/,
      );
    });

    test('updateUser changes name, picture, tags and properties; null clears them', async () => {
      const { user } = await bot.client.createUser({
        name: 'Bob',
        pictureUrl: 'https://example.com/b.png',
        tags: { a: '1', b: '2' },
        properties: { p: 'x', q: 'y' },
      });
      await sleep(15);
      const { user: renamed } = await bot.client.updateUser({
        id: user.id,
        name: 'Robert',
        tags: { a: null, c: '3' },
        properties: { q: null, r: 'z' },
      });
      assert.equal(renamed.name, 'Robert');
      assert.equal(renamed.pictureUrl, 'https://example.com/b.png');
      assert.deepEqual(renamed.tags, { b: '2', c: '3' });
      assert.deepEqual(renamed.properties, { p: 'x', r: 'z' });
      assert.equal(renamed.createdAt, user.createdAt);
      assert.ok(renamed.updatedAt > user.updatedAt, 'updatedAt moves forward');

      const { user: cleared } = await bot.client.updateUser({ id: user.id, name: null, pictureUrl: null });
      assert.equal(cleared.name ?? undefined, undefined);
      assert.equal(cleared.pictureUrl ?? undefined, undefined);
      assert.deepEqual(cleared.tags, { b: '2', c: '3' });

      const { user: got } = await bot.client.getUser({ id: user.id });
      assert.equal(got.name ?? undefined, undefined);
      assert.deepEqual(got.tags, { b: '2', c: '3' });
      assert.deepEqual(got.properties, { p: 'x', r: 'z' });
    });

    test('deleteUser removes the user', async () => {
      const { user } = await bot.client.createUser({ tags: {} });
      assert.deepEqual(await bot.client.deleteUser({ id: user.id }), {});
      await rejectsWith(bot.client.getUser({ id: user.id }), ResourceNotFoundError);
      await rejectsWith(bot.client.deleteUser({ id: user.id }), ResourceNotFoundError);
    });

    test('deleteUser deletes what the user wrote, its events and its states; others’ stay', async () => {
      const { user } = await bot.client.createUser({ tags: {} });
      const { user: other } = await bot.client.createUser({ tags: {} });
      const { conversation } = await bot.client.createConversation({ channel: 'c', tags: {} });
      const say = (userId: string, text: string) =>
        bot.client.createMessage({
          conversationId: conversation.id,
          userId,
          type: 'text',
          payload: { text },
          tags: {},
        });
      const mine = await say(user.id, 'mine');
      const theirs = await say(other.id, 'theirs');
      const { event } = await bot.client.createEvent({
        type: 'custom',
        payload: {},
        conversationId: conversation.id,
        userId: user.id,
      });
      await bot.client.setState({ type: 'user', id: user.id, name: 'profile', payload: { a: 1 } });
      assert.equal((await bot.client.getConversation({ id: conversation.id })).conversation.messageCount, 2);

      await bot.client.deleteUser({ id: user.id });
      await rejectsWith(bot.client.getMessage({ id: mine.message.id }), ResourceNotFoundError);
      await rejectsWith(bot.client.getEvent({ id: event.id }), ResourceNotFoundError);
      await rejectsWith(
        bot.client.getState({ type: 'user', id: user.id, name: 'profile' }),
        ResourceNotFoundError,
      );
      assert.equal((await bot.client.getMessage({ id: theirs.message.id })).message.id, theirs.message.id);
      const { messages } = await bot.client.listMessages({ conversationId: conversation.id });
      assert.deepEqual(ids(messages), [theirs.message.id]);
      assert.equal((await bot.client.getConversation({ id: conversation.id })).conversation.messageCount, 1);
    });

    test('getOrCreateUser matches on all the tags given, without discriminateByTags', async () => {
      const k = unique();
      const first = await bot.client.getOrCreateUser({ tags: { k, other: 'x' }, name: 'First' });
      assert.equal(first.meta.created, true);
      assertId(first.user.id, 'user');
      assert.equal(first.user.name, 'First');
      const again = await bot.client.getOrCreateUser({ tags: { k, other: 'x' } });
      assert.equal(again.meta.created, false);
      assert.equal(again.user.id, first.user.id);
      const differs = await bot.client.getOrCreateUser({ tags: { k, other: 'y' } });
      assert.equal(differs.meta.created, true);
      assert.notEqual(differs.user.id, first.user.id);
    });

    test('getOrCreateUser with discriminateByTags matches on those keys only', async () => {
      const k = unique();
      const first = await bot.client.getOrCreateUser({ tags: { k, other: 'x' }, discriminateByTags: ['k'] });
      assert.equal(first.meta.created, true);
      const again = await bot.client.getOrCreateUser({ tags: { k, other: 'z' }, discriminateByTags: ['k'] });
      assert.equal(again.meta.created, false);
      assert.equal(again.user.id, first.user.id);
      const fresh = await bot.client.getOrCreateUser({ tags: { k: `${k}-2` }, discriminateByTags: ['k'] });
      assert.equal(fresh.meta.created, true);
      assert.notEqual(fresh.user.id, first.user.id);
    });

    test('10 concurrent getOrCreateUser with the same discriminating tags create one record', async () => {
      const k = unique('race');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          bot.client.getOrCreateUser({ tags: { race: k, caller: String(i) }, discriminateByTags: ['race'] }),
        ),
      );
      assert.equal(new Set(results.map((r) => r.user.id)).size, 1, 'every caller got the same user');
      assert.equal(results.filter((r) => r.meta.created).length, 1, 'exactly one caller created it');
      const { users } = await bot.client.listUsers({ tags: { race: k } });
      assert.equal(users.length, 1, 'one record exists');
    });

    describe('listUsers filters and sort', () => {
      let grp: string;
      let U1: string, U2: string, U3: string;
      let mid12: string, mid23: string, afterAll: string;
      let conversationId: string;
      before(async () => {
        grp = unique('grp');
        const c = bot.client;
        U1 = (await c.createUser({ tags: { grp, color: 'red' } })).user.id;
        await sleep(15);
        mid12 = new Date().toISOString();
        await sleep(15);
        U2 = (await c.createUser({ tags: { grp, color: 'blue' } })).user.id;
        await sleep(15);
        mid23 = new Date().toISOString();
        await sleep(15);
        U3 = (await c.createUser({ tags: { grp, color: 'red' } })).user.id;
        conversationId = (await c.createConversation({ channel: 'web', tags: {} })).conversation.id;
        await c.addParticipant({ id: conversationId, userId: U1 });
        await c.addParticipant({ id: conversationId, userId: U3 });
        await sleep(15);
        afterAll = new Date().toISOString();
        await sleep(15);
      });

      test('newest first by default, oldest first with sortDirection asc', async () => {
        assert.deepEqual(ids((await bot.client.listUsers({ tags: { grp } })).users), [U3, U2, U1]);
        assert.deepEqual(
          ids(
            (await bot.client.listUsers({ tags: { grp }, sortField: 'createdAt', sortDirection: 'asc' }))
              .users,
          ),
          [U1, U2, U3],
        );
      });

      test('by tags', async () => {
        assert.deepEqual(ids((await bot.client.listUsers({ tags: { grp, color: 'red' } })).users), [U3, U1]);
        assert.deepEqual(ids((await bot.client.listUsers({ tags: { grp, color: 'blue' } })).users), [U2]);
      });

      test('by conversationId (its participants)', async () => {
        assert.deepEqual(ids((await bot.client.listUsers({ conversationId })).users), [U3, U1]);
      });

      test('by afterDate and beforeDate', async () => {
        assert.deepEqual(ids((await bot.client.listUsers({ tags: { grp }, afterDate: mid12 })).users), [
          U3,
          U2,
        ]);
        assert.deepEqual(ids((await bot.client.listUsers({ tags: { grp }, beforeDate: mid23 })).users), [
          U2,
          U1,
        ]);
        assert.deepEqual(
          ids((await bot.client.listUsers({ tags: { grp }, afterDate: mid12, beforeDate: mid23 })).users),
          [U2],
        );
      });

      test('sortField and rangeField updatedAt follow the last change', async () => {
        await bot.client.updateUser({ id: U1, name: 'changed' });
        const byUpdate = await bot.client.listUsers({
          tags: { grp },
          sortField: 'updatedAt',
          sortDirection: 'desc',
        });
        assert.equal(byUpdate.users[0]?.id, U1);
        const changedLately = await bot.client.listUsers({
          tags: { grp },
          afterDate: afterAll,
          rangeField: 'updatedAt',
        });
        assert.deepEqual(ids(changedLately.users), [U1]);
        const createdLately = await bot.client.listUsers({
          tags: { grp },
          afterDate: afterAll,
          rangeField: 'createdAt',
        });
        assert.deepEqual(ids(createdLately.users), []);
      });
    });

    test('a walk over users with pageSize 4 never repeats or skips under concurrent writes', async () => {
      const grp = unique('walk');
      const stable: string[] = [];
      const doomed: string[] = [];
      // 17 users that exist throughout, interleaved with 5 deleted during the walk (ahead of it and behind it).
      for (let i = 0; i < 22; i++) {
        const { user } = await bot.client.createUser({ tags: { grp } });
        (i % 5 === 1 ? doomed : stable).push(user.id);
      }
      const pages = await walkPages(
        async (nextToken) => {
          const page = await bot.client.listUsers({ tags: { grp }, pageSize: 4, nextToken });
          return { ids: ids(page.users), nextToken: page.meta.nextToken };
        },
        async (i) => {
          await bot.client.createUser({ tags: { grp } });
          const victim = doomed[i];
          if (victim) await bot.client.deleteUser({ id: victim });
        },
      );
      for (const page of pages.slice(0, -1)) assert.equal(page.length, 4);
      const served = pages.flat();
      assertNoRepeats(served);
      assert.deepEqual(
        stable.filter((id) => !served.includes(id)),
        [],
      );
    });
  });
}
