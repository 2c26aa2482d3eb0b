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
  describe(`runtime conversations and participants (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t);
    });
    after(() => t.close());

    test('createConversation answers the conversation, and getConversation reads it back', async () => {
      const { conversation } = await bot.client.createConversation({
        channel: 'channel',
        tags: { owner: 'u1', topic: 'billing' },
        properties: { locale: 'fr' },
      });
      assertId(conversation.id, 'conv');
      assertTimestamp(conversation.createdAt, 'createdAt');
      assertTimestamp(conversation.updatedAt, 'updatedAt');
      assert.equal(conversation.channel, 'channel');
      assert.deepEqual(conversation.tags, { owner: 'u1', topic: 'billing' });
      assert.deepEqual(conversation.properties, { locale: 'fr' });
      assert.equal(conversation.messageCount, 0);
      assert.equal(typeof conversation.integration, 'string');

      const got = await bot.client.getConversation({ id: conversation.id });
      assert.deepEqual(got.conversation, conversation);
    });

    test('createConversation answers 201 and the other conversation routes 200', async () => {
      const created = await rawRuntime(t, bot, 'POST', '/v1/chat/conversations', {
        channel: 'web',
        tags: {},
      });
      assert.equal(created.status, 201);
      const id = (created.body as { conversation: { id: string } }).conversation.id;
      assertId(id, 'conv');
      assert.equal((await rawRuntime(t, bot, 'GET', `/v1/chat/conversations/${id}`)).status, 200);
      assert.equal((await rawRuntime(t, bot, 'GET', '/v1/chat/conversations')).status, 200);
      const goc = await rawRuntime(t, bot, 'POST', '/v1/chat/conversations/get-or-create', {
        channel: 'web',
        tags: { k: unique() },
      });
      assert.equal(goc.status, 200);
      assert.equal(
        (await rawRuntime(t, bot, 'PUT', `/v1/chat/conversations/${id}`, { tags: {} })).status,
        200,
      );
      assert.equal((await rawRuntime(t, bot, 'DELETE', `/v1/chat/conversations/${id}`, {})).status, 200);
    });

    test('integrationName is reported as the conversation integration', async () => {
      const { conversation } = await bot.client.createConversation({
        channel: 'channel',
        tags: {},
        integrationName: 'telegram',
      });
      assert.equal(conversation.integration, 'telegram');
    });

    test('an unknown conversation id answers ResourceNotFound on get, update and delete', async () => {
      const id = unknownId('conv');
      await rejectsWith(bot.client.getConversation({ id }), ResourceNotFoundError);
      await rejectsWith(bot.client.updateConversation({ id, tags: { a: 'b' } }), ResourceNotFoundError);
      await rejectsWith(bot.client.deleteConversation({ id }), ResourceNotFoundError);
    });

    test('the owner personal token with x-bot-id works on the same bot', async () => {
      const owner = t.client({ botId: bot.botId });
      const { conversation } = await owner.createConversation({ channel: 'web', tags: { via: 'pat' } });
      const seen = await bot.client.getConversation({ id: conversation.id });
      assert.equal(seen.conversation.id, conversation.id);
      assert.deepEqual(seen.conversation.tags, { via: 'pat' });
    });

    test('updateConversation sets tags and properties, and a null value deletes one', async () => {
      const { conversation } = await bot.client.createConversation({
        channel: 'web',
        tags: { a: '1', b: '2' },
        properties: { p: 'x', q: 'y' },
      });
      await sleep(15);
      const { conversation: updated } = await bot.client.updateConversation({
        id: conversation.id,
        tags: { a: null, c: '3' },
        properties: { p: null, r: 'z' },
      });
      assert.deepEqual(updated.tags, { b: '2', c: '3' });
      assert.deepEqual(updated.properties, { q: 'y', r: 'z' });
      assert.equal(updated.createdAt, conversation.createdAt);
      assert.ok(updated.updatedAt > conversation.updatedAt, 'updatedAt moves forward');

      const { conversation: got } = await bot.client.getConversation({ id: conversation.id });
      assert.deepEqual(got.tags, { b: '2', c: '3' });
      assert.deepEqual(got.properties, { q: 'y', r: 'z' });

      const byDeletedTag = await bot.client.listConversations({ tags: { a: '1' } });
      assert.ok(
        !ids(byDeletedTag.conversations).includes(conversation.id),
        'a deleted tag no longer matches',
      );
      const byNewTag = await bot.client.listConversations({ tags: { c: '3', b: '2' } });
      assert.ok(ids(byNewTag.conversations).includes(conversation.id));
    });

    test('a tag key namespaced by an integration (chat:owner) is kept as given and filters', async () => {
      const owner = unique('owner');
      const { conversation } = await bot.client.createConversation({
        channel: 'web',
        tags: { 'chat:owner': owner },
      });
      assert.deepEqual(conversation.tags, { 'chat:owner': owner });
      const { conversation: got } = await bot.client.getConversation({ id: conversation.id });
      assert.deepEqual(got.tags, { 'chat:owner': owner });
      const { conversations } = await bot.client.listConversations({ tags: { 'chat:owner': owner } });
      assert.deepEqual(ids(conversations), [conversation.id]);
    });

    test('createConversation without a channel is refused with InvalidPayload naming the field', async () => {
      await rejectsWith(bot.client.createConversation({ tags: {} } as never), InvalidPayloadError, /channel/);
      await rejectsWith(
        bot.client.createConversation({ channel: 'web', tags: ['a'] } as never),
        InvalidPayloadError,
        /tags/,
      );
    });

    test('a tag value of the wrong JSON type is refused, not coerced', async () => {
      await rejectsWith(
        bot.client.createConversation({ channel: 'web', tags: { a: 1 } } as never),
        InvalidPayloadError,
        /tags/,
      );
      await rejectsWith(
        bot.client.createConversation({ channel: 7, tags: {} } as never),
        InvalidPayloadError,
        /channel/,
      );
    });

    test('an empty tag value unsets the key (as the client documents)', async () => {
      const { conversation } = await bot.client.createConversation({
        channel: 'web',
        tags: { a: '1', b: '2' },
      });
      const { conversation: updated } = await bot.client.updateConversation({
        id: conversation.id,
        tags: { a: '' },
      });
      assert.deepEqual(updated.tags, { b: '2' });
    });

    test('getOrCreateConversation matches on all the tags given, without discriminateByTags', async () => {
      const k = unique();
      const first = await bot.client.getOrCreateConversation({ channel: 'web', tags: { k, other: 'x' } });
      assert.equal(first.meta.created, true);
      assertId(first.conversation.id, 'conv');
      assert.deepEqual(first.conversation.tags, { k, other: 'x' });

      const again = await bot.client.getOrCreateConversation({ channel: 'web', tags: { k, other: 'x' } });
      assert.equal(again.meta.created, false);
      assert.equal(again.conversation.id, first.conversation.id);

      const differs = await bot.client.getOrCreateConversation({ channel: 'web', tags: { k, other: 'y' } });
      assert.equal(differs.meta.created, true);
      assert.notEqual(differs.conversation.id, first.conversation.id);
    });

    test('getOrCreateConversation with discriminateByTags matches on those keys only', async () => {
      const k = unique();
      const first = await bot.client.getOrCreateConversation({
        channel: 'web',
        tags: { k, other: 'x' },
        discriminateByTags: ['k'],
      });
      assert.equal(first.meta.created, true);
      const again = await bot.client.getOrCreateConversation({
        channel: 'web',
        tags: { k, other: 'z' },
        discriminateByTags: ['k'],
      });
      assert.equal(again.meta.created, false);
      assert.equal(again.conversation.id, first.conversation.id);

      const otherKey = await bot.client.getOrCreateConversation({
        channel: 'web',
        tags: { k: `${k}-2`, other: 'x' },
        discriminateByTags: ['k'],
      });
      assert.equal(otherKey.meta.created, true);
      assert.notEqual(otherKey.conversation.id, first.conversation.id);
    });

    test('10 concurrent getOrCreateConversation with the same discriminating tags create one record', async () => {
      const k = unique('race');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          bot.client.getOrCreateConversation({
            channel: 'web',
            tags: { race: k, caller: String(i) },
            discriminateByTags: ['race'],
          }),
        ),
      );
      const distinct = new Set(results.map((r) => r.conversation.id));
      assert.equal(distinct.size, 1, 'every caller got the same conversation');
      assert.equal(results.filter((r) => r.meta.created).length, 1, 'exactly one caller created it');
      const { conversations } = await bot.client.listConversations({ tags: { race: k } });
      assert.equal(conversations.length, 1, 'one record exists');
    });

    test('messageCount stays exact across creates and deletes', async () => {
      const { conversation } = await bot.client.createConversation({ channel: 'web', tags: {} });
      const { user } = await bot.client.createUser({ tags: {} });
      const send = (text: string) =>
        bot.client.createMessage({
          conversationId: conversation.id,
          userId: user.id,
          type: 'text',
          payload: { text },
          tags: {},
        });
      const m1 = await send('one');
      await send('two');
      await bot.client.createMessage({
        conversationId: conversation.id,
        userId: bot.botId,
        type: 'text',
        payload: { text: 'reply' },
        tags: {},
      });
      assert.equal((await bot.client.getConversation({ id: conversation.id })).conversation.messageCount, 3);

      await bot.client.deleteMessage({ id: m1.message.id });
      assert.equal((await bot.client.getConversation({ id: conversation.id })).conversation.messageCount, 2);

      await Promise.all(Array.from({ length: 8 }, (_, i) => send(`burst ${i}`)));
      assert.equal((await bot.client.getConversation({ id: conversation.id })).conversation.messageCount, 10);
      const listed = await bot.client.listMessages({ conversationId: conversation.id, pageSize: 100 });
      assert.equal(listed.messages.length, 10);
    });

    test('deleteConversation removes the conversation and everything in it', async () => {
      const { conversation } = await bot.client.createConversation({ channel: 'web', tags: {} });
      const { user } = await bot.client.createUser({ tags: {} });
      await bot.client.addParticipant({ id: conversation.id, userId: user.id });
      const messages = await Promise.all(
        ['a', 'b'].map((text) =>
          bot.client.createMessage({
            conversationId: conversation.id,
            userId: user.id,
            type: 'text',
            payload: { text },
            tags: {},
          }),
        ),
      );
      await bot.client.setState({
        type: 'conversation',
        id: conversation.id,
        name: 'ctx',
        payload: { n: 1 },
      });

      assert.deepEqual(await bot.client.deleteConversation({ id: conversation.id }), {});
      await rejectsWith(bot.client.getConversation({ id: conversation.id }), ResourceNotFoundError);
      for (const { message } of messages) {
        await rejectsWith(bot.client.getMessage({ id: message.id }), ResourceNotFoundError);
      }
      await rejectsWith(
        bot.client.getState({ type: 'conversation', id: conversation.id, name: 'ctx' }),
        ResourceNotFoundError,
      );
      // The user outlives the conversation.
      assert.equal((await bot.client.getUser({ id: user.id })).user.id, user.id);
      await rejectsWith(bot.client.deleteConversation({ id: conversation.id }), ResourceNotFoundError);
    });

    test('participants: add, get, list, remove', async () => {
      const { conversation } = await bot.client.createConversation({ channel: 'web', tags: {} });
      const users = await Promise.all(
        ['Ada', 'Bob', 'Cy'].map(async (name) => (await bot.client.createUser({ name, tags: {} })).user),
      );
      const [ada, bob, cy] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];

      const { participant } = await bot.client.addParticipant({ id: conversation.id, userId: ada.id });
      assert.equal(participant.id, ada.id);
      assert.equal(participant.name, 'Ada');
      await bot.client.addParticipant({ id: conversation.id, userId: bob.id });
      await bot.client.addParticipant({ id: conversation.id, userId: cy.id });

      const got = await bot.client.getParticipant({ id: conversation.id, userId: bob.id });
      assert.equal(got.participant.id, bob.id);
      assert.equal(got.participant.name, 'Bob');

      const all = await bot.client.listParticipants({ id: conversation.id });
      assert.deepEqual(ids(all.participants).sort(), [ada.id, bob.id, cy.id].sort());
      assert.equal(all.meta.nextToken, undefined);

      const page1 = await bot.client.listParticipants({ id: conversation.id, pageSize: 2 });
      assert.equal(page1.participants.length, 2);
      assert.ok(page1.meta.nextToken, 'a second page');
      const page2 = await bot.client.listParticipants({
        id: conversation.id,
        pageSize: 2,
        nextToken: page1.meta.nextToken,
      });
      assert.equal(page2.participants.length, 1);
      assert.equal(page2.meta.nextToken, undefined);
      assert.deepEqual(
        [...ids(page1.participants), ...ids(page2.participants)].sort(),
        [ada.id, bob.id, cy.id].sort(),
      );

      assert.deepEqual(await bot.client.removeParticipant({ id: conversation.id, userId: bob.id }), {});
      await rejectsWith(
        bot.client.getParticipant({ id: conversation.id, userId: bob.id }),
        ResourceNotFoundError,
      );
      const rest = await bot.client.listParticipants({ id: conversation.id });
      assert.deepEqual(ids(rest.participants).sort(), [ada.id, cy.id].sort());
      // The user still exists: only the participation was removed.
      assert.equal((await bot.client.getUser({ id: bob.id })).user.id, bob.id);
    });

    test('participants: unknown users and conversations answer ResourceNotFound', async () => {
      const { conversation } = await bot.client.createConversation({ channel: 'web', tags: {} });
      const { user } = await bot.client.createUser({ tags: {} });
      await rejectsWith(
        bot.client.addParticipant({ id: conversation.id, userId: unknownId('user') }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.addParticipant({ id: unknownId('conv'), userId: user.id }),
        ResourceNotFoundError,
      );
      await rejectsWith(
        bot.client.getParticipant({ id: conversation.id, userId: user.id }),
        ResourceNotFoundError,
      );
      await rejectsWith(bot.client.listParticipants({ id: unknownId('conv') }), ResourceNotFoundError);
    });

    describe('listConversations filters and sort', () => {
      let b: TestBot;
      let A: string, B: string, C: string;
      let midAB: string, midBC: string;
      let u1: string, u2: string;
      before(async () => {
        b = await createTestBot(t, 'list-bot');
        const c = b.client;
        A = (await c.createConversation({ channel: 'web', tags: { team: 'a' }, integrationName: 'chat' }))
          .conversation.id;
        await sleep(15);
        midAB = new Date().toISOString();
        await sleep(15);
        B = (await c.createConversation({ channel: 'sms', tags: { team: 'b' }, integrationName: 'twilio' }))
          .conversation.id;
        await sleep(15);
        midBC = new Date().toISOString();
        await sleep(15);
        C = (
          await c.createConversation({
            channel: 'web',
            tags: { team: 'a', vip: 'yes' },
            integrationName: 'chat',
          })
        ).conversation.id;
        u1 = (await c.createUser({ tags: {} })).user.id;
        u2 = (await c.createUser({ tags: {} })).user.id;
        await c.addParticipant({ id: A, userId: u1 });
        await c.addParticipant({ id: C, userId: u1 });
        await c.addParticipant({ id: C, userId: u2 });
        const send = (conversationId: string) =>
          c.createMessage({ conversationId, userId: u1, type: 'text', payload: { text: 'hi' }, tags: {} });
        await send(A);
        await send(A);
        await send(C);
      });

      test('newest first by default, oldest first with sortDirection asc', async () => {
        const desc = await b.client.listConversations({});
        assert.deepEqual(ids(desc.conversations), [C, B, A]);
        assert.deepEqual(desc.meta, {});
        const asc = await b.client.listConversations({ sortField: 'createdAt', sortDirection: 'asc' });
        assert.deepEqual(ids(asc.conversations), [A, B, C]);
      });

      test('sortField updatedAt orders by the last change', async () => {
        await sleep(15);
        await b.client.updateConversation({ id: B, tags: { touched: 'yes' } });
        const { conversations } = await b.client.listConversations({
          sortField: 'updatedAt',
          sortDirection: 'desc',
        });
        assert.equal(conversations[0]?.id, B);
        await b.client.updateConversation({ id: B, tags: { touched: null } });
      });

      test('by tags: every tag given must match', async () => {
        assert.deepEqual(ids((await b.client.listConversations({ tags: { team: 'a' } })).conversations), [
          C,
          A,
        ]);
        assert.deepEqual(
          ids((await b.client.listConversations({ tags: { team: 'a', vip: 'yes' } })).conversations),
          [C],
        );
        assert.deepEqual(ids((await b.client.listConversations({ tags: { team: 'z' } })).conversations), []);
      });

      test('by channel and by integrationName', async () => {
        assert.deepEqual(ids((await b.client.listConversations({ channel: 'sms' })).conversations), [B]);
        assert.deepEqual(ids((await b.client.listConversations({ channel: 'web' })).conversations), [C, A]);
        assert.deepEqual(
          ids((await b.client.listConversations({ integrationName: 'twilio' })).conversations),
          [B],
        );
        assert.deepEqual(ids((await b.client.listConversations({ integrationName: 'chat' })).conversations), [
          C,
          A,
        ]);
      });

      test('by participantIds', async () => {
        assert.deepEqual(ids((await b.client.listConversations({ participantIds: [u1] })).conversations), [
          C,
          A,
        ]);
        assert.deepEqual(ids((await b.client.listConversations({ participantIds: [u2] })).conversations), [
          C,
        ]);
      });

      test('by afterDate and beforeDate (creation date)', async () => {
        assert.deepEqual(ids((await b.client.listConversations({ afterDate: midAB })).conversations), [C, B]);
        assert.deepEqual(ids((await b.client.listConversations({ beforeDate: midBC })).conversations), [
          B,
          A,
        ]);
        assert.deepEqual(
          ids((await b.client.listConversations({ afterDate: midAB, beforeDate: midBC })).conversations),
          [B],
        );
      });

      test('by minMessageCount and maxMessageCount (inclusive)', async () => {
        const count = async (q: { minMessageCount?: number; maxMessageCount?: number }) =>
          ids((await b.client.listConversations(q)).conversations);
        assert.deepEqual(await count({ minMessageCount: 1 }), [C, A]);
        assert.deepEqual(await count({ minMessageCount: 2 }), [A]);
        assert.deepEqual(await count({ maxMessageCount: 1 }), [C, B]);
        assert.deepEqual(await count({ maxMessageCount: 0 }), [B]);
        assert.deepEqual(await count({ minMessageCount: 1, maxMessageCount: 1 }), [C]);
      });

      test('filters combine', async () => {
        assert.deepEqual(
          ids((await b.client.listConversations({ channel: 'web', participantIds: [u2] })).conversations),
          [C],
        );
        assert.deepEqual(
          ids((await b.client.listConversations({ tags: { team: 'a' }, minMessageCount: 2 })).conversations),
          [A],
        );
      });
    });

    test('pageSize defaults to 20 and accepts up to 100', async () => {
      const b = await createTestBot(t, 'page-bot');
      for (let i = 0; i < 25; i++)
        await b.client.createConversation({ channel: 'web', tags: { i: String(i) } });
      const first = await b.client.listConversations({});
      assert.equal(first.conversations.length, 20);
      assert.ok(first.meta.nextToken);
      const second = await b.client.listConversations({ nextToken: first.meta.nextToken });
      assert.equal(second.conversations.length, 5);
      assert.equal(second.meta.nextToken, undefined);
      const all = await b.client.listConversations({ pageSize: 100 });
      assert.equal(all.conversations.length, 25);
      assert.equal(all.meta.nextToken, undefined);
      assert.deepEqual(ids(all.conversations), [...ids(first.conversations), ...ids(second.conversations)]);
      assert.equal((await rejects4xx(b.client.listConversations({ pageSize: 101 }))).code, 400);
      assert.equal((await rejects4xx(b.client.listConversations({ pageSize: 0 }))).code, 400);
      const collected = await b.client.list.conversations({}).collect();
      assert.equal(collected.length, 25);
    });

    test('a walk with pageSize 7 never repeats or skips while others are created and deleted', async () => {
      const b = await createTestBot(t, 'walk-bot');
      const stable: string[] = [];
      const doomed: string[] = [];
      // Interleave the 30 stable conversations with 10 that will be deleted during the walk.
      for (let i = 0; i < 40; i++) {
        const { conversation } = await b.client.createConversation({
          channel: 'web',
          tags: { i: String(i) },
        });
        (i % 4 === 3 ? doomed : stable).push(conversation.id);
      }
      assert.equal(stable.length, 30);

      for (const direction of ['desc', 'asc'] as const) {
        const created: string[] = [];
        const toDelete = direction === 'desc' ? doomed.slice(0, 5) : doomed.slice(5);
        const pages = await walkPages(
          async (nextToken) => {
            const page = await b.client.listConversations({
              pageSize: 7,
              nextToken,
              sortDirection: direction,
            });
            assert.ok(page.conversations.length <= 7);
            return { ids: ids(page.conversations), nextToken: page.meta.nextToken };
          },
          async (i) => {
            const made = await Promise.all([
              b.client.createConversation({ channel: 'web', tags: { during: direction } }),
              b.client.createConversation({ channel: 'web', tags: { during: direction } }),
            ]);
            created.push(...made.map((m) => m.conversation.id));
            const victim = toDelete[i];
            if (victim) await b.client.deleteConversation({ id: victim });
          },
        );
        for (const page of pages.slice(0, -1))
          assert.equal(page.length, 7, 'every page but the last is full');
        const served = pages.flat();
        assertNoRepeats(served);
        const missing = stable.filter((id) => !served.includes(id));
        assert.deepEqual(
          missing,
          [],
          `the ${direction} walk serves every conversation that existed throughout`,
        );
        assert.ok(pages.length >= 5, 'the walk took several pages');
      }
    });
  });
}
