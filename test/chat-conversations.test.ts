import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { assertTimestamp, unique } from './helpers/runtime.ts';
import { assertChatError, chatRejects, createChatBot, rawChat } from './helpers/sse.ts';
import type { ChatBot } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const forbidden = (p: Promise<unknown>) => chatRejects(p, chat.ForbiddenError, 'Forbidden', 403);
const notFound = (p: Promise<unknown>) => chatRejects(p, chat.ResourceNotFoundError, 'ResourceNotFound', 404);

for (const store of await testStores()) {
  describe(`chat conversations and participants (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: ChatBot;
    let owner: chat.AuthenticatedClient;
    let other: chat.AuthenticatedClient;
    before(async () => {
      t = await startTestServer(store);
      bot = await createChatBot(t, 'chat-conversations');
      owner = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'owner' });
      other = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'other' });
    });
    after(() => t.close());

    test('createConversation answers 201; without an id it gets a random one', async () => {
      const res = await rawChat(bot.webhookUrl, 'POST', '/conversations', { key: owner.user.key, body: {} });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const { conversation } = res.body as {
        conversation: { id: string; createdAt: string; updatedAt: string };
      };
      assert.match(conversation.id, UUID);
      assertTimestamp(conversation.createdAt);
      assertTimestamp(conversation.updatedAt);
      assert.deepEqual(Object.keys(conversation).sort(), ['createdAt', 'id', 'updatedAt']);

      const { conversation: named } = await owner.createConversation({ id: 'conv-named_1' });
      assert.equal(named.id, 'conv-named_1');
      assert.deepEqual((await owner.getConversation({ id: 'conv-named_1' })).conversation, named);
    });

    test('getOrCreateConversation answers 201, creates once, then returns the same conversation', async () => {
      const id = unique('goc');
      const res = await rawChat(bot.webhookUrl, 'POST', '/conversations/get-or-create', {
        key: owner.user.key,
        body: { id },
      });
      assert.equal(res.status, 201);
      const created = (res.body as { conversation: { id: string; createdAt: string } }).conversation;
      assert.equal(created.id, id);
      const { conversation: again } = await owner.getOrCreateConversation({ id });
      assert.equal(again.id, id);
      assert.equal(again.createdAt, created.createdAt);
      const mine = await owner.list.conversations({}).collect();
      assert.equal(mine.filter((c) => c.id === id).length, 1, 'one conversation');
    });

    test('a conversation id is a foreign id: validated, unique per channel, 409 on a duplicate', async () => {
      const longest = `A-z_0\\9/${'c'.repeat(62)}`;
      assert.equal(longest.length, 70);
      assert.equal((await owner.createConversation({ id: longest })).conversation.id, longest);
      assert.equal((await owner.getConversation({ id: longest })).conversation.id, longest);

      for (const bad of ['c'.repeat(71), 'with space', 'dot.ted', 'q?x', 'ü']) {
        await chatRejects(
          owner.createConversation({ id: bad }),
          chat.InvalidPayloadError,
          'InvalidPayload',
          400,
        );
        assertChatError(
          await rawChat(bot.webhookUrl, 'POST', '/conversations/get-or-create', {
            key: owner.user.key,
            body: { id: bad },
          }),
          400,
          'InvalidPayload',
        );
      }

      const id = unique('dup');
      await owner.createConversation({ id });
      await chatRejects(owner.createConversation({ id }), chat.AlreadyExistsError, 'AlreadyExists', 409);
      await chatRejects(other.createConversation({ id }), chat.AlreadyExistsError, 'AlreadyExists', 409);

      // Another bot's channel has ids of its own.
      const second = await createChatBot(t, 'chat-conversations-2');
      const stranger = await chat.Client.connect({ apiUrl: second.webhookUrl, userId: 'owner' });
      assert.equal((await stranger.createConversation({ id })).conversation.id, id);
      const { message } = await stranger.createMessage({
        conversationId: id,
        payload: { type: 'text', text: 'x' },
      });
      const mine = await owner.listMessages({ conversationId: id });
      assert.ok(!mine.messages.some((m) => m.id === message.id), 'the two conversations are apart');
    });

    test('an unknown conversation is not found', async () => {
      await notFound(owner.getConversation({ id: 'never-created' }));
      await notFound(owner.listMessages({ conversationId: 'never-created' }));
      await notFound(
        owner.createMessage({ conversationId: 'never-created', payload: { type: 'text', text: 'x' } }),
      );
      await notFound(owner.deleteConversation({ id: 'never-created' }));
    });

    test('listConversations lists only the conversations the user owns, most recent first, page by page', async () => {
      const lister = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: unique('lister') });
      const created: string[] = [];
      for (let i = 0; i < 25; i++) {
        created.push((await lister.createConversation({ id: unique(`list${i}`) })).conversation.id);
      }
      // A conversation the lister only takes part in is not listed.
      const { conversation: foreign } = await owner.createConversation({ id: unique('not-owned') });
      await owner.addParticipant({ conversationId: foreign.id, userId: lister.user.id });

      const first = await lister.listConversations({});
      assert.ok(first.meta.nextToken, 'more than one page');
      const all = await lister.list.conversations({}).collect();
      assert.deepEqual(
        all.map((c) => c.id),
        [...created].reverse(),
        'every owned conversation once, most recent first',
      );
      assert.ok(!all.some((c) => c.id === foreign.id));

      const none = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: unique('none') });
      assert.deepEqual(await none.listConversations({}), { conversations: [], meta: {} });
    });

    test('deleteConversation: the owner deletes it, and its id can be used again', async () => {
      const id = unique('del');
      await owner.createConversation({ id });
      await owner.addParticipant({ conversationId: id, userId: other.user.id });
      await forbidden(other.deleteConversation({ id }));
      assert.deepEqual(await owner.deleteConversation({ id }), {});
      await notFound(owner.getConversation({ id }));
      await notFound(other.getConversation({ id }));
      assert.ok(!(await owner.list.conversations({}).collect()).some((c) => c.id === id));
      assert.equal((await owner.createConversation({ id })).conversation.id, id);
    });

    test('participants: the creator takes part; the owner adds, reads, lists and removes others', async () => {
      const { conversation } = await owner.createConversation({});
      const conversationId = conversation.id;
      let { participants } = await owner.listParticipants({ conversationId });
      assert.deepEqual(
        participants.map((p) => p.id),
        [owner.user.id],
      );

      await other.updateUser({ name: 'Other' });
      const added = await rawChat(bot.webhookUrl, 'POST', `/conversations/${conversationId}/participants`, {
        key: owner.user.key,
        body: { userId: other.user.id },
      });
      assert.equal(added.status, 200);
      const { participant } = added.body as { participant: { id: string; name: string } };
      assert.equal(participant.id, 'other');
      assert.equal(participant.name, 'Other');

      const got = await owner.getParticipant({ conversationId, userId: other.user.id });
      assert.equal(got.participant.id, other.user.id);
      assert.equal(
        (await other.getParticipant({ conversationId, userId: owner.user.id })).participant.id,
        'owner',
      );
      ({ participants } = await other.listParticipants({ conversationId }));
      assert.deepEqual(participants.map((p) => p.id).sort(), ['other', 'owner']);
      const collected = await owner.list.participants({ conversationId }).collect();
      assert.equal(collected.length, 2);

      assert.deepEqual(await owner.removeParticipant({ conversationId, userId: other.user.id }), {});
      await notFound(owner.getParticipant({ conversationId, userId: other.user.id }));
      ({ participants } = await owner.listParticipants({ conversationId }));
      assert.deepEqual(
        participants.map((p) => p.id),
        ['owner'],
      );
      await forbidden(other.getConversation({ id: conversationId }));
    });

    test('a user that is no participant is refused with 403 Forbidden everywhere', async () => {
      const { conversation } = await owner.createConversation({});
      const conversationId = conversation.id;
      const { message } = await owner.createMessage({
        conversationId,
        payload: { type: 'text', text: 'private' },
      });
      const { event } = await owner.createEvent({ conversationId, payload: { secret: true } });

      await forbidden(other.getConversation({ id: conversationId }));
      await forbidden(other.getOrCreateConversation({ id: conversationId }));
      await forbidden(other.deleteConversation({ id: conversationId }));
      await forbidden(other.listMessages({ conversationId }));
      await forbidden(other.createMessage({ conversationId, payload: { type: 'text', text: 'intrude' } }));
      await forbidden(other.createEvent({ conversationId, payload: {} }));
      await forbidden(other.getMessage({ id: message.id }));
      await forbidden(other.deleteMessage({ id: message.id }));
      await forbidden(other.getEvent({ id: event.id }));
      await forbidden(other.listParticipants({ conversationId }));
      await forbidden(other.getParticipant({ conversationId, userId: owner.user.id }));
      await forbidden(other.addParticipant({ conversationId, userId: other.user.id }));
      await forbidden(other.removeParticipant({ conversationId, userId: owner.user.id }));
      // The event stream answers 403 too (the client rejects with the raw event).
      await assert.rejects(other.listenConversation({ id: conversationId }), (err: { status?: number }) => {
        assert.equal(err.status, 403);
        return true;
      });
      assert.ok(!(await other.list.conversations({}).collect()).some((c) => c.id === conversationId));
      // Nothing leaked into the conversation.
      const { messages } = await owner.listMessages({ conversationId });
      assert.deepEqual(
        messages.map((m) => m.id),
        [message.id],
      );
    });

    test('a participant reads and writes, but only the owner manages participants', async () => {
      const third = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: unique('third') });
      const { conversation } = await owner.createConversation({});
      const conversationId = conversation.id;
      await owner.addParticipant({ conversationId, userId: other.user.id });

      assert.equal((await other.getConversation({ id: conversationId })).conversation.id, conversationId);
      assert.equal(
        (await other.getOrCreateConversation({ id: conversationId })).conversation.id,
        conversationId,
      );
      const { message } = await other.createMessage({
        conversationId,
        payload: { type: 'text', text: 'hi' },
      });
      assert.equal(message.userId, other.user.id);
      assert.equal((await owner.getMessage({ id: message.id })).message.id, message.id);
      assert.equal((await other.listMessages({ conversationId })).messages[0]?.id, message.id);
      const { event } = await other.createEvent({ conversationId, payload: { k: 1 } });
      assert.equal((await owner.getEvent({ id: event.id })).event.userId, other.user.id);

      await forbidden(other.addParticipant({ conversationId, userId: third.user.id }));
      await forbidden(other.removeParticipant({ conversationId, userId: owner.user.id }));
      await forbidden(other.deleteConversation({ id: conversationId }));
      await forbidden(third.getConversation({ id: conversationId }));
      assert.ok(
        !(await other.list.conversations({}).collect()).some((c) => c.id === conversationId),
        'a participant does not own the conversation',
      );
    });

    test('ids with "/" and "\\" work in every path: conversations and participants', async () => {
      const slashUser = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'team/a\\b' });
      const id = 'rooms/1\\x';
      await owner.createConversation({ id });
      assert.equal((await owner.getConversation({ id })).conversation.id, id);
      const { participant } = await owner.addParticipant({ conversationId: id, userId: slashUser.user.id });
      assert.equal(participant.id, 'team/a\\b');
      assert.equal(
        (await owner.getParticipant({ conversationId: id, userId: slashUser.user.id })).participant.id,
        slashUser.user.id,
      );
      const { message } = await slashUser.createMessage({
        conversationId: id,
        payload: { type: 'text', text: 's' },
      });
      assert.equal(message.conversationId, id);
      assert.equal(message.userId, 'team/a\\b');
      assert.equal((await owner.listMessages({ conversationId: id })).messages[0]?.id, message.id);
      await owner.removeParticipant({ conversationId: id, userId: slashUser.user.id });
      await forbidden(slashUser.getConversation({ id }));
      await owner.deleteConversation({ id });
      await notFound(owner.getConversation({ id }));
    });

    test('concurrent getOrCreateConversation calls with one new id make one conversation', async () => {
      const id = unique('race');
      const results = await Promise.all(
        Array.from({ length: 10 }, () => owner.getOrCreateConversation({ id })),
      );
      assert.equal(new Set(results.map((r) => r.conversation.createdAt)).size, 1);
      const owned = await owner.list.conversations({}).collect();
      assert.equal(owned.filter((c) => c.id === id).length, 1);
      assert.deepEqual(
        (await owner.listParticipants({ conversationId: id })).participants.map((p) => p.id),
        ['owner'],
      );
    });

    test('the owner cannot remove themselves; unknown users are not found', async () => {
      const { conversation } = await owner.createConversation({});
      await chatRejects(
        owner.removeParticipant({ conversationId: conversation.id, userId: owner.user.id }),
        chat.InvalidPayloadError,
        'InvalidPayload',
        400,
      );
      await notFound(owner.addParticipant({ conversationId: conversation.id, userId: 'nobody-here' }));
      await notFound(owner.getParticipant({ conversationId: conversation.id, userId: 'nobody-here' }));
      await notFound(owner.removeParticipant({ conversationId: conversation.id, userId: 'nobody-here' }));
    });

    test('chat conversations are runtime conversations of channel "channel", integration "chat", ids kept apart', async () => {
      const fresh = await createChatBot(t, 'chat-conversations-runtime');
      const user = await chat.Client.connect({ apiUrl: fresh.webhookUrl, userId: 'rt-user' });
      const { conversation } = await user.createConversation({ id: 'rt-conv' });
      const { conversations } = await fresh.client.listConversations({
        channel: 'channel',
        integrationName: 'chat',
      });
      assert.equal(conversations.length, 1);
      const runtime = conversations[0]!;
      assert.equal(runtime.channel, 'channel');
      assert.equal(runtime.integration, 'chat');
      assert.notEqual(runtime.id, 'rt-conv', 'the internal id is not the foreign id');
      assert.equal(runtime.createdAt, conversation.createdAt);
      const { participants } = await fresh.client.listParticipants({ id: runtime.id });
      assert.equal(participants.length, 1);
      const internalUserId = participants[0]!.id;
      assert.notEqual(internalUserId, 'rt-user');

      const answers = [
        conversation,
        await user.getConversation({ id: 'rt-conv' }),
        await user.getOrCreateConversation({ id: 'rt-conv' }),
        await user.listConversations({}),
        await user.listParticipants({ conversationId: 'rt-conv' }),
        await user.createMessage({ conversationId: 'rt-conv', payload: { type: 'text', text: 'x' } }),
        await user.listMessages({ conversationId: 'rt-conv' }),
        await user.createEvent({ conversationId: 'rt-conv', payload: { y: 1 } }),
      ];
      for (const answer of answers) {
        const text = JSON.stringify(answer);
        assert.ok(!text.includes(runtime.id), `no internal conversation id in ${text}`);
        assert.ok(!text.includes(internalUserId), `no internal user id in ${text}`);
      }
    });
  });
}
