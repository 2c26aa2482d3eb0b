import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ForbiddenError,
  InvalidPayloadError,
  PayloadTooLargeError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/client';
import {
  assertErrorBody,
  assertId,
  assertNoRepeats,
  createTestBot,
  ids,
  rawRuntime,
  rejects4xx,
  rejectsWith,
  unique,
  unknownId,
  walkPages,
} from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const values = (tags: { value: string }[]) => tags.map((t) => t.value).sort();

for (const store of await testStores()) {
  describe(
    `runtime tags, analytics, incoming messages, limits and isolation (${store.name})`,
    { skip: store.skip },
    () => {
      let t: TestServer;
      let bot: TestBot;
      before(async () => {
        t = await startTestServer(store);
        bot = await createTestBot(t);
      });
      after(() => t.close());

      describe('listTagValues', () => {
        test('answers the distinct values of a conversation tag', async () => {
          const key = unique('color');
          for (const value of ['red', 'blue', 'red', 'green', 'blue']) {
            await bot.client.createConversation({ channel: 'web', tags: { [key]: value } });
          }
          await bot.client.createUser({ tags: { [key]: 'user-only' } });
          const { tags, meta } = await bot.client.listTagValues({ key, type: 'conversation' });
          assert.deepEqual(values(tags), ['blue', 'green', 'red']);
          assert.equal(meta.nextToken, undefined);
        });

        test('answers user and message tag values, each of its own type', async () => {
          const key = unique('k');
          const conv = (
            await bot.client.createConversation({ channel: 'web', tags: { [key]: 'conv-value' } })
          ).conversation.id;
          const user = (await bot.client.createUser({ tags: { [key]: 'u1' } })).user.id;
          await bot.client.createUser({ tags: { [key]: 'u2' } });
          await bot.client.createMessage({
            conversationId: conv,
            userId: user,
            type: 'text',
            payload: { text: 'x' },
            tags: { [key]: 'm1' },
          });
          assert.deepEqual(values((await bot.client.listTagValues({ key, type: 'user' })).tags), [
            'u1',
            'u2',
          ]);
          assert.deepEqual(values((await bot.client.listTagValues({ key, type: 'message' })).tags), ['m1']);
          assert.deepEqual(values((await bot.client.listTagValues({ key, type: 'conversation' })).tags), [
            'conv-value',
          ]);
        });

        test('a namespaced key (chat:owner) works, and a deleted tag value disappears', async () => {
          const owner = unique('owner');
          const { conversation } = await bot.client.createConversation({
            channel: 'web',
            tags: { 'chat:owner': owner },
          });
          assert.ok(
            values(
              (await bot.client.listTagValues({ key: 'chat:owner', type: 'conversation' })).tags,
            ).includes(owner),
          );
          await bot.client.updateConversation({ id: conversation.id, tags: { 'chat:owner': null } });
          assert.ok(
            !values(
              (await bot.client.listTagValues({ key: 'chat:owner', type: 'conversation' })).tags,
            ).includes(owner),
          );
        });

        test('pages with pageSize and nextToken', async () => {
          const key = unique('paged');
          for (let i = 0; i < 5; i++) await bot.client.createUser({ tags: { [key]: `v${i}` } });
          const pages = await walkPages(async (nextToken) => {
            const page = await bot.client.listTagValues({ key, type: 'user', pageSize: 2, nextToken });
            assert.ok(page.tags.length <= 2);
            return { ids: page.tags.map((x) => x.value), nextToken: page.meta.nextToken };
          });
          assert.equal(pages.length, 3);
          assertNoRepeats(pages.flat());
          assert.deepEqual(pages.flat().sort(), ['v0', 'v1', 'v2', 'v3', 'v4']);
        });

        test('an unknown type is refused', async () => {
          assert.equal(
            (await rejects4xx(bot.client.listTagValues({ key: 'k', type: 'bot' } as never))).code,
            400,
          );
        });

        test('tag values belong to one bot', async () => {
          const key = unique('iso');
          await bot.client.createConversation({ channel: 'web', tags: { [key]: 'mine' } });
          const other = await createTestBot(t, 'other-bot');
          assert.deepEqual((await other.client.listTagValues({ key, type: 'conversation' })).tags, []);
        });
      });

      test('trackAnalytics is accepted, and an invalid one refused', async () => {
        assert.deepEqual(await bot.client.trackAnalytics({ name: 'greetings', count: 3 }), {});
        const raw = await rawRuntime(t, bot, 'POST', '/v1/chat/analytics', { name: 'greetings', count: 1 });
        assert.equal(raw.status, 200);
        await rejectsWith(
          bot.client.trackAnalytics({ name: 'greetings' } as never),
          InvalidPayloadError,
          /count/,
        );
      });

      test('captureObservation is accepted, and an invalid one refused', async () => {
        const conv = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
        assert.deepEqual(
          await bot.client.captureObservation({
            name: 'llm-call',
            data: { model: 'x', tokens: 12 },
            conversationId: conv,
            traceId: 'trace-1',
          }),
          {},
        );
        const raw = await rawRuntime(t, bot, 'POST', '/v1/chat/observations', { name: 'span', data: {} });
        assert.equal(raw.status, 200);
        await rejectsWith(bot.client.captureObservation({ data: {} } as never), InvalidPayloadError, /name/);
        await rejectsWith(
          bot.client.captureObservation({ name: 'x', data: 'text' } as never),
          InvalidPayloadError,
          /data/,
        );
      });

      describe('initializeIncomingMessage', () => {
        test('gets or creates the user, the conversation and the message in one call', async () => {
          const ext = unique('ext');
          const input = {
            user: { tags: { 'chat:id': ext }, name: 'Visitor', discriminateByTags: ['chat:id'] },
            conversation: {
              channel: 'channel',
              tags: { 'chat:thread': ext },
              discriminateByTags: ['chat:thread'],
            },
            message: {
              type: 'text',
              payload: { text: 'hello' },
              tags: { 'chat:msg': ext },
              discriminateByTags: ['chat:msg'],
            },
          };
          const first = await bot.client.initializeIncomingMessage(input);
          assertId(first.user.id, 'user');
          assertId(first.conversation.id, 'conv');
          assert.equal(first.user.name, 'Visitor');
          assert.deepEqual(first.user.tags, { 'chat:id': ext });
          assert.equal(first.conversation.channel, 'channel');
          assert.deepEqual(first.conversation.tags, { 'chat:thread': ext });
          assert.ok(first.message, 'a message is answered');
          assertId(first.message.id, 'msg');
          assert.equal(first.message.direction, 'incoming');
          assert.equal(first.message.userId, first.user.id);
          assert.equal(first.message.conversationId, first.conversation.id);
          assert.deepEqual(first.message.payload, { text: 'hello' });

          // They are real records.
          assert.equal((await bot.client.getUser({ id: first.user.id })).user.id, first.user.id);
          const { conversation } = await bot.client.getConversation({ id: first.conversation.id });
          assert.equal(conversation.messageCount, 1);
          assert.equal((await bot.client.getMessage({ id: first.message.id })).message.id, first.message.id);

          // The same discriminators find the same records: nothing is created twice.
          const second = await bot.client.initializeIncomingMessage(input);
          assert.equal(second.user.id, first.user.id);
          assert.equal(second.conversation.id, first.conversation.id);
          assert.equal(second.message?.id, first.message.id);
          assert.equal(
            (await bot.client.getConversation({ id: first.conversation.id })).conversation.messageCount,
            1,
          );
        });

        test('the incoming message is queued as a message_created event', async () => {
          const ext = unique('ext');
          const { message, user, conversation } = await bot.client.initializeIncomingMessage({
            user: { tags: { ext }, discriminateByTags: ['ext'] },
            conversation: { channel: 'web', tags: { ext }, discriminateByTags: ['ext'] },
            message: { type: 'text', payload: { text: 'q' }, tags: { ext }, discriminateByTags: ['ext'] },
          });
          assert.ok(message);
          const { events } = await bot.client.listEvents({ messageId: message.id, type: 'message_created' });
          assert.equal(events.length, 1);
          assert.equal(events[0]?.status, 'pending');
          assert.equal(events[0]?.userId, user.id);
          assert.equal(events[0]?.conversationId, conversation.id);
        });

        test('accepts existing ids instead of descriptions, and works without a message', async () => {
          const user = (await bot.client.createUser({ tags: {} })).user;
          const conversation = (await bot.client.createConversation({ channel: 'web', tags: {} }))
            .conversation;
          const result = await bot.client.initializeIncomingMessage({
            userId: user.id,
            conversationId: conversation.id,
          });
          assert.equal(result.user.id, user.id);
          assert.equal(result.conversation.id, conversation.id);
          assert.equal(result.message ?? undefined, undefined);
          await rejectsWith(
            bot.client.initializeIncomingMessage({
              userId: unknownId('user'),
              conversationId: conversation.id,
            }),
            ResourceNotFoundError,
          );
        });
      });

      describe('importMessages', () => {
        test('imports messages with their dates, and counts them', async () => {
          const conv = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
          const user = (await bot.client.createUser({ tags: {} })).user.id;
          const ext = unique('imp');
          const batch = [
            {
              conversationId: conv,
              userId: user,
              type: 'text',
              payload: { text: 'old question' },
              tags: { ext: `${ext}-1` },
              createdAt: '2024-01-02T03:04:05.000Z',
              discriminateByTags: ['ext'],
            },
            {
              conversationId: conv,
              userId: bot.botId,
              type: 'text',
              payload: { text: 'old answer' },
              tags: { ext: `${ext}-2` },
              createdAt: '2024-01-02T03:04:06.000Z',
              discriminateByTags: ['ext'],
            },
          ];
          const { messages } = await bot.client.importMessages({ messages: batch });
          assert.equal(messages.length, 2);
          const [q, a] = messages as [(typeof messages)[0], (typeof messages)[0]];
          assertId(q.id, 'msg');
          assert.equal(q.createdAt, '2024-01-02T03:04:05.000Z');
          assert.equal(q.direction, 'incoming');
          assert.deepEqual(q.payload, { text: 'old question' });
          assert.equal(a.createdAt, '2024-01-02T03:04:06.000Z');
          assert.equal(a.direction, 'outgoing');
          assert.equal((await bot.client.getConversation({ id: conv })).conversation.messageCount, 2);
          assert.deepEqual(ids((await bot.client.listMessages({ conversationId: conv })).messages), [
            a.id,
            q.id,
          ]);

          // Importing again with the same discriminating tags does not duplicate.
          const again = await bot.client.importMessages({ messages: batch });
          assert.deepEqual(ids(again.messages), [q.id, a.id]);
          assert.equal((await bot.client.getConversation({ id: conv })).conversation.messageCount, 2);
        });

        test('refuses a message for an unknown conversation', async () => {
          const user = (await bot.client.createUser({ tags: {} })).user.id;
          await rejectsWith(
            bot.client.importMessages({
              messages: [
                {
                  conversationId: unknownId('conv'),
                  userId: user,
                  type: 'text',
                  payload: {},
                  tags: {},
                  createdAt: new Date().toISOString(),
                  discriminateByTags: [],
                },
              ],
            }),
            ResourceNotFoundError,
          );
        });
      });

      describe('limits and invalid requests', () => {
        test('a message payload over 1 MB answers PayloadTooLarge', async () => {
          const conv = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
          const user = (await bot.client.createUser({ tags: {} })).user.id;
          await rejectsWith(
            bot.client.createMessage({
              conversationId: conv,
              userId: user,
              type: 'text',
              payload: { text: 'x'.repeat(1024 * 1024 + 10) },
              tags: {},
            }),
            PayloadTooLargeError,
          );
          assert.equal((await bot.client.getConversation({ id: conv })).conversation.messageCount, 0);
          // Just under the limit is fine.
          const { message } = await bot.client.createMessage({
            conversationId: conv,
            userId: user,
            type: 'text',
            payload: { text: 'x'.repeat(900 * 1024) },
            tags: {},
          });
          assert.equal((message.payload as { text: string }).text.length, 900 * 1024);
        });

        test('any Runtime body over 1 MB answers 413 PayloadTooLarge', async () => {
          const res = await rawRuntime(t, bot, 'POST', '/v1/chat/events', {
            type: 'big',
            payload: { blob: 'y'.repeat(1024 * 1024 + 10) },
          });
          assertErrorBody(res, 413, 'PayloadTooLarge');
        });

        test('malformed JSON answers 400', async () => {
          const res = await rawRuntime(t, bot, 'POST', '/v1/chat/conversations', '{"channel": ');
          assert.equal(res.status, 400);
          assert.equal((res.body as { code: number }).code, 400);
        });

        test('pageSize over 100 or under 1 is refused on every list', async () => {
          const conv = (await bot.client.createConversation({ channel: 'web', tags: {} })).conversation.id;
          const lists: [string, () => Promise<unknown>][] = [
            ['listConversations', () => bot.client.listConversations({ pageSize: 101 })],
            ['listUsers', () => bot.client.listUsers({ pageSize: 101 })],
            ['listMessages', () => bot.client.listMessages({ conversationId: conv, pageSize: 101 })],
            ['listEvents', () => bot.client.listEvents({ pageSize: 101 })],
            ['listWorkflows', () => bot.client.listWorkflows({ pageSize: 101 })],
            ['listParticipants', () => bot.client.listParticipants({ id: conv, pageSize: 101 })],
            ['listTagValues', () => bot.client.listTagValues({ key: 'k', type: 'user', pageSize: 101 })],
            ['listUsers', () => bot.client.listUsers({ pageSize: 0 })],
          ];
          for (const [name, call] of lists) {
            const err = await rejects4xx(call()).catch((e: Error) => {
              throw new Error(`${name}: ${e.message}`);
            });
            assert.equal(err.code, 400, `${name}: ${err.type}`);
          }
        });

        test('a nextToken that is not one of the list is refused', async () => {
          assert.equal(
            (await rejects4xx(bot.client.listConversations({ nextToken: 'not-a-token' }))).code,
            400,
          );
        });
      });

      describe('authentication and cross-bot isolation', () => {
        let other: TestBot;
        let theirs: { conversation: string; user: string; message: string; event: string; workflow: string };
        before(async () => {
          other = await createTestBot(t, 'bot-b');
          const c = other.client;
          const conversation = (await c.createConversation({ channel: 'web', tags: { owner: 'b' } }))
            .conversation.id;
          const user = (await c.createUser({ tags: {} })).user.id;
          const message = (
            await c.createMessage({
              conversationId: conversation,
              userId: user,
              type: 'text',
              payload: {},
              tags: {},
            })
          ).message.id;
          const event = (await c.createEvent({ type: 'b-event', payload: {} })).event.id;
          const workflow = (await c.createWorkflow({ name: 'b-flow', status: 'pending' })).workflow.id;
          await c.setState({ type: 'conversation', id: conversation, name: 'secret', payload: { b: true } });
          theirs = { conversation, user, message, event, workflow };
        });

        test("a key of bot A with bot B's id is Forbidden", async () => {
          const mixed = t.client({ token: bot.key, botId: other.botId, workspaceId: undefined });
          await rejectsWith(mixed.listConversations({}), ForbiddenError);
          await rejectsWith(mixed.getConversation({ id: theirs.conversation }), ForbiddenError);
        });

        test('no token, a wrong token, or no bot id is Unauthorized', async () => {
          const anonymous = t.client({ token: undefined, botId: bot.botId, workspaceId: undefined });
          await rejectsWith(anonymous.listConversations({}), UnauthorizedError);
          const wrong = t.client({
            token: 'bp_bak_not-a-real-key-at-all-000000',
            botId: bot.botId,
            workspaceId: undefined,
          });
          await rejectsWith(wrong.listConversations({}), UnauthorizedError);
          const noBot = t.client({ token: bot.key, botId: undefined, workspaceId: undefined });
          await rejectsWith(noBot.listConversations({}), UnauthorizedError);
        });

        test("the owner's personal token with x-bot-id acts as that bot", async () => {
          const owner = t.client({ botId: other.botId });
          assert.equal(
            (await owner.getConversation({ id: theirs.conversation })).conversation.id,
            theirs.conversation,
          );
          const { conversation } = await owner.createConversation({ channel: 'web', tags: { by: 'owner' } });
          assert.equal(
            (await other.client.getConversation({ id: conversation.id })).conversation.id,
            conversation.id,
          );
          await rejectsWith(bot.client.getConversation({ id: conversation.id }), ResourceNotFoundError);
        });

        test("bot A reading bot B's records gets ResourceNotFound", async () => {
          const a = bot.client;
          await rejectsWith(a.getConversation({ id: theirs.conversation }), ResourceNotFoundError);
          await rejectsWith(a.getUser({ id: theirs.user }), ResourceNotFoundError);
          await rejectsWith(a.getMessage({ id: theirs.message }), ResourceNotFoundError);
          await rejectsWith(a.getEvent({ id: theirs.event }), ResourceNotFoundError);
          await rejectsWith(a.getWorkflow({ id: theirs.workflow }), ResourceNotFoundError);
          await rejectsWith(a.listParticipants({ id: theirs.conversation }), ResourceNotFoundError);
          await rejectsWith(
            a.getState({ type: 'conversation', id: theirs.conversation, name: 'secret' }),
            ResourceNotFoundError,
          );
        });

        test("bot A changing bot B's records gets ResourceNotFound, and nothing changes", async () => {
          const a = bot.client;
          await rejectsWith(
            a.updateConversation({ id: theirs.conversation, tags: { owner: 'a' } }),
            ResourceNotFoundError,
          );
          await rejectsWith(a.deleteConversation({ id: theirs.conversation }), ResourceNotFoundError);
          await rejectsWith(a.updateUser({ id: theirs.user, name: 'hijacked' }), ResourceNotFoundError);
          await rejectsWith(a.deleteUser({ id: theirs.user }), ResourceNotFoundError);
          await rejectsWith(a.updateMessage({ id: theirs.message, tags: { x: 'y' } }), ResourceNotFoundError);
          await rejectsWith(a.deleteMessage({ id: theirs.message }), ResourceNotFoundError);
          await rejectsWith(
            a.setState({
              type: 'conversation',
              id: theirs.conversation,
              name: 'secret',
              payload: { a: true },
            }),
            ResourceNotFoundError,
          );
          await rejectsWith(
            a.addParticipant({ id: theirs.conversation, userId: theirs.user }),
            ResourceNotFoundError,
          );
          const mine = (await a.createConversation({ channel: 'web', tags: {} })).conversation.id;
          await rejectsWith(a.addParticipant({ id: mine, userId: theirs.user }), ResourceNotFoundError);

          const b = other.client;
          const { conversation } = await b.getConversation({ id: theirs.conversation });
          assert.deepEqual(conversation.tags, { owner: 'b' });
          assert.equal(conversation.messageCount, 1);
          assert.equal((await b.getUser({ id: theirs.user })).user.name ?? undefined, undefined);
          assert.deepEqual((await b.getMessage({ id: theirs.message })).message.tags, {});
          assert.deepEqual(
            (await b.getState({ type: 'conversation', id: theirs.conversation, name: 'secret' })).state
              .payload,
            { b: true },
          );
        });

        test("bot A's lists never show bot B's records", async () => {
          const a = bot.client;
          assert.ok(
            !ids((await a.listConversations({ pageSize: 100, tags: { owner: 'b' } })).conversations).length,
          );
          assert.ok(!ids((await a.listUsers({ pageSize: 100 })).users).includes(theirs.user));
          assert.deepEqual(
            (await a.listMessages({ pageSize: 100 })).messages.filter((m) => m.id === theirs.message),
            [],
          );
          assert.deepEqual((await a.listEvents({ type: 'b-event' })).events, []);
          assert.deepEqual((await a.listWorkflows({ name: 'b-flow' })).workflows, []);
          // Listing the participants of their conversation shows nothing (or says it does not exist).
          try {
            assert.deepEqual((await a.listUsers({ conversationId: theirs.conversation })).users, []);
          } catch (err) {
            assert.ok(err instanceof ResourceNotFoundError, `got ${String(err)}`);
          }
        });
      });
    },
  );
}
