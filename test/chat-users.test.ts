import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { assertTimestamp, unique } from './helpers/runtime.ts';
import { assertChatError, chatRejects, createChatBot, rawChat } from './helpers/sse.ts';
import type { ChatBot } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An HS256 user key `{ id }` signed with `secret`, as a bot owner (or the chat client) signs one. */
async function signKey(payload: Record<string, unknown>, secret: string): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .sign(new TextEncoder().encode(secret));
}

/** Connects a new chat user in shared mode, with the id of our choosing. */
function connectShared(bot: ChatBot, userId?: string) {
  return chat.Client.connect({ apiUrl: bot.webhookUrl, ...(userId !== undefined && { userId }) });
}

for (const store of await testStores()) {
  describe(`chat users and keys (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: ChatBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createChatBot(t, 'chat-users');
    });
    after(() => t.close());

    test('getBot shows the chat channel: name chat, enabled, a webhook id and its URL', async () => {
      const { bot: full } = await t.client().getBot({ id: bot.botId });
      const entry = full.integrations.chat;
      assert.ok(entry, 'integrations.chat exists');
      assert.equal(entry.name, 'chat');
      assert.equal(entry.enabled, true);
      assert.equal(typeof entry.webhookId, 'string');
      assert.ok(entry.webhookId.length > 0);
      assert.equal(entry.webhookUrl, `${t.url}/chat/${entry.webhookId}`);
      const other = await createChatBot(t, 'chat-users-other');
      assert.notEqual(other.webhookId, bot.webhookId, 'every bot has a webhook id of its own');
    });

    test('GET /hello/ answers 2xx without a key, and an unknown webhook id is not found', async () => {
      const hello = await fetch(`${bot.webhookUrl}/hello/`);
      assert.equal(hello.status, 200);
      await hello.text();
      const unknown = await rawChat(`${t.url}/chat/00000000-0000-0000-0000-000000000000`, 'GET', '/hello/');
      assertChatError(unknown, 404, 'ResourceNotFound');
    });

    test('connect({ apiUrl }) creates a user with a random id and a server-signed HS256 key { id }', async () => {
      const client = await chat.Client.connect({ apiUrl: bot.webhookUrl });
      assert.match(client.user.id, UUID, 'a random foreign id (a UUID)');
      assertTimestamp(client.user.createdAt, 'createdAt');
      assertTimestamp(client.user.updatedAt, 'updatedAt');
      assert.deepEqual(decodeProtectedHeader(client.user.key), { alg: 'HS256', typ: 'JWT' });
      assert.equal(decodeJwt(client.user.key).id, client.user.id, 'the key names the foreign id');
      const { user } = await client.getUser({});
      assert.deepEqual(user, {
        id: client.user.id,
        createdAt: client.user.createdAt,
        updatedAt: client.user.updatedAt,
      });
    });

    test('createUser answers 201 { user, key } with the given id and fields', async () => {
      const id = unique('ada');
      const res = await rawChat(bot.webhookUrl, 'POST', '/users', {
        body: { id, name: 'Ada', pictureUrl: 'https://example.com/ada.png', profile: 'likes math' },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const { user, key } = res.body as { user: Record<string, unknown>; key: string };
      assert.equal(user.id, id);
      assert.equal(user.name, 'Ada');
      assert.equal(user.pictureUrl, 'https://example.com/ada.png');
      assert.equal(user.profile, 'likes math');
      assertTimestamp(user.createdAt);
      assert.equal(decodeJwt(key).id, id);

      // The official client, given that key, finds the same user.
      const client = await chat.Client.connect({ apiUrl: bot.webhookUrl, userKey: key });
      assert.equal(client.user.id, id);
      assert.equal(client.user.name, 'Ada');
      assert.equal(client.user.key, key);
    });

    test('getOrCreateUser answers 201 with the key’s user, and changes nothing of an existing one', async () => {
      const client = await connectShared(bot, unique('goc'));
      const res = await rawChat(bot.webhookUrl, 'POST', '/users/get-or-create', {
        key: client.user.key,
        body: {},
      });
      assert.equal(res.status, 201);
      assert.equal((res.body as { user: { id: string } }).user.id, client.user.id);
      const again = await chat.Client.connect({ apiUrl: bot.webhookUrl, userKey: client.user.key });
      assert.equal(again.user.createdAt, client.user.createdAt, 'the same user, not a new one');
    });

    test('getUser, updateUser and deleteUser act on the key’s user', async () => {
      const client = await connectShared(bot, unique('upd'));
      const { user: updated } = await client.updateUser({
        name: 'Grace',
        pictureUrl: 'https://example.com/g.png',
        profile: 'admiral',
      });
      assert.equal(updated.id, client.user.id);
      assert.equal(updated.name, 'Grace');
      assert.equal(updated.pictureUrl, 'https://example.com/g.png');
      assert.equal(updated.profile, 'admiral');
      const { user } = await client.getUser({});
      assert.deepEqual(user, updated);

      const { user: renamed } = await client.updateUser({ name: 'Grace H.' });
      assert.equal(renamed.name, 'Grace H.');
      assert.equal(renamed.profile, 'admiral', 'fields not sent are kept');

      assert.deepEqual(await client.deleteUser({}), {});
      await chatRejects(client.getUser({}), chat.UnauthorizedError, 'Unauthorized', 401);
    });

    test('user fields are validated: name over 200 and profile over 1000 characters are refused', async () => {
      const client = await connectShared(bot, unique('val'));
      const long = await chatRejects(
        client.updateUser({ name: 'n'.repeat(201) }),
        chat.InvalidPayloadError,
        'InvalidPayload',
        400,
      );
      assert.match(long.message, /name/);
      const profile = await rawChat(bot.webhookUrl, 'POST', '/users', {
        body: { profile: 'p'.repeat(1001) },
      });
      assertChatError(profile, 400, 'InvalidPayload');
      assert.match((profile.body as { message: string }).message, /profile/);
    });

    test('a user id is a foreign id: at most 70 characters of [a-zA-Z0-9_-\\/], unique per channel', async () => {
      const longest = `Az09_-\\/${'x'.repeat(62)}`;
      assert.equal(longest.length, 70);
      const created = await connectShared(bot, longest);
      assert.equal(created.user.id, longest);
      assert.equal(decodeJwt(created.user.key).id, longest);
      assert.equal((await created.getUser({})).user.id, longest);

      for (const bad of ['x'.repeat(71), 'has space', 'dot.ted', 'é', 'semi;colon', 'at@sign']) {
        const res = await rawChat(bot.webhookUrl, 'POST', '/users', { body: { id: bad } });
        assertChatError(res, 400, 'InvalidPayload');
      }
      await chatRejects(connectShared(bot, 'has space'), chat.InvalidPayloadError, 'InvalidPayload', 400);

      const taken = unique('taken');
      await connectShared(bot, taken);
      const dup = await chatRejects(connectShared(bot, taken), chat.AlreadyExistsError, 'AlreadyExists', 409);
      assert.match(dup.message, new RegExp(taken));
    });

    test('a missing, malformed, badly signed or id-less key answers 401 Unauthorized', async () => {
      const client = await connectShared(bot, unique('keys'));
      const noKey = await rawChat(bot.webhookUrl, 'GET', '/users/me');
      assertChatError(noKey, 401, 'Unauthorized');

      const forged = await signKey({ id: client.user.id }, 'not-the-server-secret-at-all');
      const noId = await signKey({ sub: client.user.id }, 'not-the-server-secret-at-all');
      const [header, payload] = client.user.key.split('.');
      const tampered = `${header}.${payload}.${'A'.repeat(43)}`;
      const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
      for (const key of ['garbage', forged, noId, tampered, none]) {
        const res = await rawChat(bot.webhookUrl, 'GET', '/users/me', { key });
        assertChatError(res, 401, 'Unauthorized');
        const goc = await rawChat(bot.webhookUrl, 'POST', '/users/get-or-create', { key, body: {} });
        assertChatError(goc, 401, 'Unauthorized');
      }
      await chatRejects(
        chat.Client.connect({ apiUrl: bot.webhookUrl, userKey: forged }),
        chat.UnauthorizedError,
        'Unauthorized',
        401,
      );
    });

    test('the same user id in two bots is two users', async () => {
      const other = await createChatBot(t, 'chat-users-twin');
      const id = unique('twin');
      const here = await connectShared(bot, id);
      const there = await connectShared(other, id);
      await here.updateUser({ name: 'Here' });
      await there.updateUser({ name: 'There' });
      assert.equal((await here.getUser({})).user.name, 'Here');
      assert.equal((await there.getUser({})).user.name, 'There');
      const hereUsers = (await bot.client.listUsers({})).users.filter((u) => u.name === 'Here');
      const thereUsers = (await other.client.listUsers({})).users.filter((u) => u.name === 'There');
      assert.equal(hereUsers.length, 1);
      assert.equal(thereUsers.length, 1);
      assert.notEqual(hereUsers[0]!.id, thereUsers[0]!.id, 'two runtime users');
    });

    test('a key issued by one bot’s channel is refused by another bot’s channel, even for a user of the same id', async () => {
      const other = await createChatBot(t, 'chat-users-victim');
      const id = unique('victim');
      const victim = await connectShared(other, id);
      await victim.updateUser({ name: 'Victim' });
      // Anyone can create a user of that id on a channel of theirs and get a key for it...
      const attacker = await connectShared(bot, id);
      // ...which must not open the other bot's user of the same id.
      const res = await rawChat(other.webhookUrl, 'GET', '/users/me', { key: attacker.user.key });
      assertChatError(res, 401, 'Unauthorized');
    });

    test('the chat user’s internal id is never returned', async () => {
      const client = await connectShared(bot);
      await client.updateUser({ name: unique('hidden') });
      const name = (await client.getUser({})).user.name;
      const runtimeUser = (await bot.client.listUsers({})).users.find((u) => u.name === name);
      assert.ok(runtimeUser, 'the chat user is a runtime user of the bot');
      assert.notEqual(runtimeUser.id, client.user.id);
      const { conversation } = await client.createConversation({});
      const answers = [
        client.user,
        await client.getUser({}),
        await client.updateUser({ profile: 'p' }),
        await client.listParticipants({ conversationId: conversation.id }),
        await client.getParticipant({ conversationId: conversation.id, userId: client.user.id }),
        decodeJwt(client.user.key),
      ];
      for (const answer of answers) {
        assert.ok(
          !JSON.stringify(answer).includes(runtimeUser.id),
          `no answer holds the internal id: ${JSON.stringify(answer)}`,
        );
      }
    });

    test('a disabled channel answers 404, and enabling it again restores it', async () => {
      const own = await createChatBot(t, 'chat-users-disabled');
      const client = await connectShared(own, unique('dis'));
      await t.client().updateBot({ id: own.botId, integrations: { chat: { enabled: false } } });
      const { bot: full } = await t.client().getBot({ id: own.botId });
      assert.equal(full.integrations.chat?.enabled, false);
      assertChatError(await rawChat(own.webhookUrl, 'GET', '/hello/'), 404, 'ResourceNotFound');
      await assert.rejects(chat.Client.connect({ apiUrl: own.webhookUrl }));
      await chatRejects(client.getUser({}), chat.ResourceNotFoundError, 'ResourceNotFound', 404);

      await t.client().updateBot({ id: own.botId, integrations: { chat: { enabled: true } } });
      assert.equal((await t.client().getBot({ id: own.botId })).bot.integrations.chat?.enabled, true);
      assert.equal((await client.getUser({})).user.id, client.user.id);
    });

    test('deleting the bot removes its chat channel', async () => {
      const own = await createChatBot(t, 'chat-users-deleted');
      const client = await connectShared(own, unique('gone'));
      await t.client().deleteBot({ id: own.botId });
      assertChatError(await rawChat(own.webhookUrl, 'GET', '/hello/'), 404, 'ResourceNotFound');
      await chatRejects(client.getUser({}), chat.ResourceNotFoundError, 'ResourceNotFound', 404);
    });

    describe('personal mode (an encryption key is configured)', () => {
      const encryptionKey = 'a-very-secret-encryption-key-0123456789';
      let personal: ChatBot;
      let sharedKey: string;
      before(async () => {
        personal = await createChatBot(t, 'chat-personal');
        sharedKey = (await connectShared(personal, 'before-the-switch')).user.key;
        await t.client().updateBot({
          id: personal.botId,
          integrations: { chat: { configuration: { encryptionKey } } },
        });
      });

      test('getBot shows the encryption key in the channel configuration', async () => {
        const { bot: full } = await t.client().getBot({ id: personal.botId });
        assert.deepEqual(full.integrations.chat?.configuration, { encryptionKey });
        assert.equal(full.integrations.chat?.enabled, true);
      });

      test('createUser answers 401, with or without an id', async () => {
        assertChatError(
          await rawChat(personal.webhookUrl, 'POST', '/users', { body: {} }),
          401,
          'Unauthorized',
        );
        assertChatError(
          await rawChat(personal.webhookUrl, 'POST', '/users', { body: { id: 'someone' } }),
          401,
          'Unauthorized',
        );
        await chatRejects(
          chat.Client.connect({ apiUrl: personal.webhookUrl }),
          chat.UnauthorizedError,
          'Unauthorized',
          401,
        );
      });

      test('connect({ apiUrl, userId, encryptionKey }) creates the user on first use, then finds it', async () => {
        const first = await chat.Client.connect({
          apiUrl: personal.webhookUrl,
          userId: 'pat',
          encryptionKey,
        });
        assert.equal(first.user.id, 'pat');
        assert.equal(decodeJwt(first.user.key).id, 'pat');
        await first.updateUser({ name: 'Pat' });
        const second = await chat.Client.connect({
          apiUrl: personal.webhookUrl,
          userId: 'pat',
          encryptionKey,
        });
        assert.equal(second.user.id, 'pat');
        assert.equal(second.user.name, 'Pat');
        assert.equal(second.user.createdAt, first.user.createdAt);

        // A key the owner signs by other means works the same.
        const signed = await signKey({ id: 'pat' }, encryptionKey);
        const byKey = await chat.Client.connect({ apiUrl: personal.webhookUrl, userKey: signed });
        assert.equal(byKey.user.name, 'Pat');
        const { conversation } = await byKey.createConversation({});
        assert.deepEqual((await second.getConversation({ id: conversation.id })).conversation, conversation);
      });

      test('getOrCreateUser sets the fields on first use only; concurrent first uses make one user', async () => {
        const key = await signKey({ id: 'fields' }, encryptionKey);
        const first = await rawChat(personal.webhookUrl, 'POST', '/users/get-or-create', {
          key,
          body: { name: 'First', profile: 'p1' },
        });
        assert.equal(first.status, 201);
        assert.equal((first.body as { user: { name: string } }).user.name, 'First');
        assert.equal((first.body as { user: { profile: string } }).user.profile, 'p1');

        const racers = await Promise.all(
          Array.from({ length: 10 }, () =>
            chat.Client.connect({ apiUrl: personal.webhookUrl, userId: 'racer', encryptionKey }),
          ),
        );
        assert.equal(new Set(racers.map((r) => r.user.id)).size, 1);
        assert.equal(new Set(racers.map((r) => r.user.createdAt)).size, 1, 'one user, whoever came first');
      });

      test('keys signed with anything but the encryption key answer 401, the old shared ones too', async () => {
        const wrong = await signKey({ id: 'pat' }, 'some-other-encryption-key-987654');
        await chatRejects(
          chat.Client.connect({ apiUrl: personal.webhookUrl, userKey: wrong }),
          chat.UnauthorizedError,
          'Unauthorized',
          401,
        );
        await chatRejects(
          chat.Client.connect({
            apiUrl: personal.webhookUrl,
            userId: 'pat',
            encryptionKey: 'some-other-encryption-key-987654',
          }),
          chat.UnauthorizedError,
          'Unauthorized',
          401,
        );
        assertChatError(
          await rawChat(personal.webhookUrl, 'GET', '/users/me', { key: sharedKey }),
          401,
          'Unauthorized',
        );
        // A key of this channel is foreign to every other channel.
        const ours = await signKey({ id: 'pat' }, encryptionKey);
        assertChatError(
          await rawChat(bot.webhookUrl, 'GET', '/users/me', { key: ours }),
          401,
          'Unauthorized',
        );
      });

      test('a key with an expiry opens the channel until then, and not after, though it was used just before', async () => {
        const exp = Math.floor(Date.now() / 1000) + 3;
        const key = await new SignJWT({ id: 'short-lived' })
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setIssuedAt()
          .setExpirationTime(exp)
          .sign(new TextEncoder().encode(encryptionKey));
        const before = await rawChat(personal.webhookUrl, 'POST', '/users/get-or-create', { key, body: {} });
        assert.equal(before.status, 201);
        assert.equal((await rawChat(personal.webhookUrl, 'GET', '/users/me', { key })).status, 200);
        // Verified keys are remembered: never past their own expiry.
        await sleep(exp * 1000 - Date.now() + 300);
        assertChatError(await rawChat(personal.webhookUrl, 'GET', '/users/me', { key }), 401, 'Unauthorized');
      });

      test('a signed id that is no valid foreign id is refused with 400', async () => {
        for (const id of ['has space', 'y'.repeat(71)]) {
          const key = await signKey({ id }, encryptionKey);
          const res = await rawChat(personal.webhookUrl, 'POST', '/users/get-or-create', { key, body: {} });
          assertChatError(res, 400, 'InvalidPayload');
        }
      });

      test('an encryption key shorter than 16 characters is refused', async () => {
        await assert.rejects(
          t.client().updateBot({
            id: personal.botId,
            integrations: { chat: { configuration: { encryptionKey: 'short' } } },
          }),
          (err: { code?: number; type?: string }) => err.code === 400 && err.type === 'InvalidPayload',
        );
        const { bot: full } = await t.client().getBot({ id: personal.botId });
        assert.deepEqual(full.integrations.chat?.configuration, { encryptionKey }, 'unchanged');
      });
    });

    test('removing the encryption key returns the channel to shared mode', async () => {
      const own = await createChatBot(t, 'chat-back-to-shared');
      const encryptionKey = 'temporary-encryption-key-0123456';
      await t
        .client()
        .updateBot({ id: own.botId, integrations: { chat: { configuration: { encryptionKey } } } });
      assertChatError(await rawChat(own.webhookUrl, 'POST', '/users', { body: {} }), 401, 'Unauthorized');
      await t.client().updateBot({ id: own.botId, integrations: { chat: { configuration: {} } } });
      assert.deepEqual((await t.client().getBot({ id: own.botId })).bot.integrations.chat?.configuration, {});
      const client = await connectShared(own, unique('shared-again'));
      assert.equal((await client.getUser({})).user.id, client.user.id);
    });
  });
}
