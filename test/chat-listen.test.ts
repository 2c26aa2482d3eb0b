import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { sql } from 'kysely';
import { unique } from './helpers/runtime.ts';
import { createChatBot, eventually, listenUrl, openSse, rawChat } from './helpers/sse.ts';
import type { ChatBot, SseSignal, SseStream } from './helpers/sse.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

/** ISO 8601 in UTC with `Z`, as the client's zod `.datetime()` requires. */
const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type Received = { type: string; data: Record<string, unknown> };

/** Records every signal an official listener emits, in order. */
function record(listener: chat.SignalListener): { signals: Received[]; errors: Error[]; pings: number } {
  const seen = { signals: [] as Received[], errors: [] as Error[], pings: 0 };
  const types = [
    'message_created',
    'message_deleted',
    'event_created',
    'participant_added',
    'participant_removed',
  ] as const;
  for (const type of types) {
    listener.on(type, (data) => seen.signals.push({ type, data: data }));
  }
  listener.on('unknown', (data) => {
    if (data === 'ping') seen.pings++;
    else seen.signals.push({ type: 'unknown', data: { raw: data } });
  });
  listener.on('error', (err) => seen.errors.push(err));
  return seen;
}

const messageTexts = (signals: { type: string; data: Record<string, unknown> }[]) =>
  signals.filter((s) => s.type === 'message_created').map((s) => (s.data.payload as { text: string }).text);

/** Asserts the signal numbers of a stream go up by one, from its first. */
function assertConsecutive(signals: SseSignal[]): void {
  for (let i = 1; i < signals.length; i++) {
    assert.equal(signals[i]!.seq, signals[0]!.seq + i, `frame ${i} is numbered right after the one before`);
  }
}

for (const store of await testStores()) {
  describe(`chat live listening (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    const streams: SseStream[] = [];
    const listeners: chat.SignalListener[] = [];
    before(async () => {
      t = await startTestServer(store, { chatPingIntervalMs: '300' });
    });
    after(async () => {
      for (const s of streams) s.destroy();
      for (const l of listeners) await l.disconnect();
      await t.close();
    });

    /** A fresh bot, an owner with a conversation, and the runtime id of that conversation. */
    async function setup(name: string) {
      const bot: ChatBot = await createChatBot(t, name);
      const owner = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'owner' });
      const { conversation } = await owner.createConversation({ id: 'room' });
      const { conversations } = await bot.client.listConversations({
        channel: 'channel',
        integrationName: 'chat',
      });
      assert.equal(conversations.length, 1);
      return { bot, owner, conversationId: conversation.id, runtimeId: conversations[0]!.id };
    }

    async function open(
      bot: ChatBot,
      conversationId: string,
      userKey: string,
      lastEventId?: string | number,
    ) {
      const stream = await openSse(listenUrl(bot.webhookUrl, conversationId), {
        userKey,
        ...(lastEventId !== undefined && { lastEventId }),
      });
      streams.push(stream);
      return stream;
    }

    async function listen(client: chat.AuthenticatedClient, id: string) {
      const listener = await client.listenConversation({ id });
      listeners.push(listener);
      return listener;
    }

    test('the stream answers 200 text/event-stream with unnamed {type,data} frames numbered by id', async () => {
      const { bot, owner, conversationId } = await setup('listen-wire');
      const stream = await open(bot, conversationId, owner.user.key);
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      for (let i = 0; i < 3; i++) {
        await owner.createMessage({ conversationId, payload: { type: 'text', text: `w${i}` } });
      }
      await stream.waitUntil('three messages', (s) => messageTexts(s.signals()).length === 3);
      const frames = stream.frames.filter((f) => f.data !== 'ping');
      for (const frame of frames) {
        assert.equal(frame.event, undefined, 'no event: name (the client drops named events)');
        assert.match(frame.id ?? '', /^\d+$/, 'every signal frame has a numeric id');
        assert.deepEqual(Object.keys(JSON.parse(frame.data) as object).sort(), ['data', 'type']);
      }
      assertConsecutive(stream.signals());
      assert.deepEqual(messageTexts(stream.signals()), ['w0', 'w1', 'w2']);
    });

    test('the official client receives all five signal types, with isBot and UTC createdAt, in order', async () => {
      const { bot, owner, conversationId, runtimeId } = await setup('listen-client');
      const bob = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'bob' });
      const listener = await listen(owner, conversationId);
      const seen = record(listener);

      await owner.addParticipant({ conversationId, userId: 'bob' });
      const { message: fromBob } = await bob.createMessage({
        conversationId,
        payload: { type: 'text', text: 'hi from bob' },
        metadata: { m: 1 },
      });
      const { message: fromBot } = await bot.client.createMessage({
        conversationId: runtimeId,
        userId: bot.botId,
        type: 'text',
        payload: { text: 'hi from the bot' },
        tags: {},
      });
      const carousel = {
        type: 'carousel' as const,
        items: [
          {
            type: 'card' as const,
            title: 'c',
            actions: [{ action: 'say' as const, label: 'l', value: 'v' }],
          },
        ],
      };
      const { message: rich } = await owner.createMessage({ conversationId, payload: carousel });
      const { event: userEvent } = await owner.createEvent({ conversationId, payload: { typing: true } });
      const { event: botEvent } = await bot.client.createEvent({
        type: 'custom:ping',
        payload: { from: 'bot' },
        conversationId: runtimeId,
      });
      await bob.deleteMessage({ id: fromBob.id });
      await owner.removeParticipant({ conversationId, userId: 'bob' });

      await eventually('eight signals', () => seen.signals.length >= 8);
      assert.deepEqual(seen.errors, []);
      assert.deepEqual(
        seen.signals.map((s) => s.type),
        [
          'participant_added',
          'message_created',
          'message_created',
          'message_created',
          'event_created',
          'event_created',
          'message_deleted',
          'participant_removed',
        ],
      );
      const [added, bobMsg, botMsg, richMsg, userEvt, botEvt, deleted, removed] = seen.signals.map(
        (s) => s.data,
      );
      assert.deepEqual(added, { conversationId: 'room', participantId: 'bob' });
      assert.deepEqual(bobMsg, {
        id: fromBob.id,
        createdAt: fromBob.createdAt,
        payload: { type: 'text', text: 'hi from bob' },
        userId: 'bob',
        conversationId: 'room',
        metadata: { m: 1 },
        isBot: false,
      });
      assert.equal(botMsg!.id, fromBot.id);
      assert.equal(botMsg!.isBot, true);
      assert.equal(botMsg!.userId, bot.botId);
      assert.equal(botMsg!.conversationId, 'room');
      assert.deepEqual(botMsg!.payload, { type: 'text', text: 'hi from the bot' });
      assert.equal(richMsg!.id, rich.id);
      assert.deepEqual(richMsg!.payload, carousel);
      assert.deepEqual(userEvt, {
        id: userEvent.id,
        createdAt: userEvent.createdAt,
        payload: { typing: true },
        conversationId: 'room',
        userId: 'owner',
        isBot: false,
      });
      assert.equal(botEvt!.id, botEvent.id);
      assert.equal(botEvt!.isBot, true);
      assert.deepEqual(botEvt!.payload, { from: 'bot' });
      assert.deepEqual(deleted, { id: fromBob.id, conversationId: 'room', userId: 'bob' });
      assert.deepEqual(removed, { conversationId: 'room', participantId: 'bob' });
      for (const s of [bobMsg, botMsg, richMsg, userEvt, botEvt]) assert.match(String(s!.createdAt), UTC);
      await listener.disconnect();
    });

    test('a data: ping frame comes at the configured interval, and the client sees it as unknown "ping"', async () => {
      const { bot, owner, conversationId } = await setup('listen-ping');
      const stream = await open(bot, conversationId, owner.user.key);
      const started = Date.now();
      await stream.waitUntil('two pings', (s) => s.frames.filter((f) => f.data === 'ping').length >= 2, 5000);
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 450, `two pings 300 ms apart take more than 450 ms (${elapsed} ms)`);
      const ping = stream.frames.find((f) => f.data === 'ping')!;
      assert.equal(ping.event, undefined);

      const listener = await listen(owner, conversationId);
      const seen = record(listener);
      await eventually('a ping through the official client', () => seen.pings > 0, 5000);
      assert.deepEqual(seen.errors, []);
      await listener.disconnect();
    });

    test('listening needs a valid key and participation: 401, 403 and 404 otherwise', async () => {
      const { bot, owner, conversationId } = await setup('listen-access');
      const stranger = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'stranger' });
      const forbidden = await open(bot, conversationId, stranger.user.key);
      assert.equal(forbidden.status, 403);
      await forbidden.closed;
      assert.equal((JSON.parse(forbidden.body()) as { type: string }).type, 'Forbidden');
      const bad = await open(bot, conversationId, 'not-a-key');
      assert.equal(bad.status, 401);
      await bad.closed;
      const missing = await open(bot, 'no-such-room', owner.user.key);
      assert.equal(missing.status, 404);
      await missing.closed;
      await assert.rejects(
        stranger.listenConversation({ id: conversationId }),
        (err: { status?: number }) => {
          assert.equal(err.status, 403);
          return true;
        },
      );
    });

    test('removeParticipant ends the removed user’s streams after participant_removed; others go on', async () => {
      const { bot, owner, conversationId } = await setup('listen-remove');
      const bob = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'bob' });
      await owner.addParticipant({ conversationId, userId: 'bob' });
      const bobStream = await open(bot, conversationId, bob.user.key);
      const ownerStream = await open(bot, conversationId, owner.user.key);
      const bobListener = await listen(bob, conversationId);
      const bobSeen = record(bobListener);

      await owner.removeParticipant({ conversationId, userId: 'bob' });
      await bobStream.waitForSignal('participant_removed', (s) => s.type === 'participant_removed');
      await Promise.race([
        bobStream.closed,
        new Promise((_, reject) => setTimeout(() => reject(new Error('bob’s stream was not ended')), 5000)),
      ]);
      assert.deepEqual(bobStream.signals().at(-1), {
        seq: bobStream.signals().at(-1)!.seq,
        type: 'participant_removed',
        data: { conversationId: 'room', participantId: 'bob' },
      });
      await eventually(
        'bob’s official listener to disconnect',
        () => bobListener.status === 'disconnected',
        5000,
      );
      assert.ok(bobSeen.errors.length > 0, 'the client reports the end of the stream as an error');
      assert.ok(bobSeen.signals.some((s) => s.type === 'participant_removed'));

      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'after' } });
      await ownerStream.waitUntil('the owner’s message', (s) => messageTexts(s.signals()).includes('after'));
      assert.equal(ownerStream.ended, false, 'the owner’s stream is still open');
      assert.equal((await open(bot, conversationId, bob.user.key)).status, 403, 'bob cannot listen again');
    });

    test('20 concurrent senders and the bot: every listener gets every message once, in one creation order', async () => {
      const { bot, owner, conversationId, runtimeId } = await setup('listen-order');
      const senders = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          chat.Client.connect({ apiUrl: bot.webhookUrl, userId: `sender-${i}` }),
        ),
      );
      for (const s of senders) await owner.addParticipant({ conversationId, userId: s.user.id });
      const raw = [
        await open(bot, conversationId, owner.user.key),
        await open(bot, conversationId, owner.user.key),
      ];
      const listener = await listen(owner, conversationId);
      const seen = record(listener);
      const start = raw[0]!.signals().length;
      assert.equal(start, 0, 'a new stream starts from now');

      const PER_SENDER = 5;
      await Promise.all([
        ...senders.map(async (sender, i) => {
          for (let n = 0; n < PER_SENDER; n++) {
            await sender.createMessage({ conversationId, payload: { type: 'text', text: `s${i}-${n}` } });
          }
        }),
        (async () => {
          for (let n = 0; n < PER_SENDER; n++) {
            await bot.client.createMessage({
              conversationId: runtimeId,
              userId: bot.botId,
              type: 'text',
              payload: { text: `bot-${n}` },
              tags: {},
            });
          }
        })(),
      ]);
      const total = (senders.length + 1) * PER_SENDER;
      for (const stream of raw) {
        await stream.waitUntil(`${total} messages`, (s) => messageTexts(s.signals()).length >= total, 20_000);
      }
      await eventually(
        `${total} messages through the client`,
        () => messageTexts(seen.signals).length >= total,
        20_000,
      );
      // Late frames would be duplicates: give them a moment to show up.
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'end' } });
      for (const stream of raw)
        await stream.waitUntil('the end marker', (s) => messageTexts(s.signals()).includes('end'));
      await eventually('the end marker through the client', () => messageTexts(seen.signals).includes('end'));

      const order = messageTexts(raw[0]!.signals());
      assert.equal(order.length, total + 1);
      assert.equal(new Set(order).size, order.length, 'no message twice');
      assert.deepEqual(messageTexts(raw[1]!.signals()), order, 'both raw listeners see one order');
      assert.deepEqual(messageTexts(seen.signals), order, 'the official client sees the same order');
      assertConsecutive(raw[0]!.signals());
      assert.deepEqual(
        raw[1]!.signals().map((s) => s.seq),
        raw[0]!.signals().map((s) => s.seq),
      );
      // Each sender's messages keep the order it sent them in.
      for (const prefix of [...senders.map((_, i) => `s${i}-`), 'bot-']) {
        const mine = order.filter((text) => text.startsWith(prefix));
        assert.deepEqual(
          mine,
          Array.from({ length: PER_SENDER }, (_, n) => `${prefix}${n}`),
        );
      }
      const botFrames = raw[0]!
        .signals()
        .filter((s) => s.type === 'message_created' && s.data.isBot === true);
      assert.equal(botFrames.length, PER_SENDER);
      assert.ok(botFrames.every((s) => s.data.userId === bot.botId));

      // A listener replaying from the start gets the same order.
      const replay = await open(bot, conversationId, owner.user.key, 0);
      await replay.waitUntil('the replay', (s) => messageTexts(s.signals()).includes('end'));
      assert.deepEqual(messageTexts(replay.signals()), order);
      replay.destroy();
    });

    test('Last-Event-ID: a stream dropped mid-burst resumes with what it missed, nothing lost or repeated', async () => {
      const { bot, owner, conversationId } = await setup('listen-resume');
      const first = await open(bot, conversationId, owner.user.key);
      const TOTAL = 40;
      const sent: string[] = [];
      const sending = (async () => {
        for (let i = 0; i < TOTAL; i++) {
          const text = `r${i}`;
          await owner.createMessage({ conversationId, payload: { type: 'text', text } });
          sent.push(text);
        }
      })();
      // Drop the connection once some messages came through, while the sender goes on.
      await first.waitUntil('ten messages', (s) => messageTexts(s.signals()).length >= 10);
      first.destroy();
      await first.closed;
      const before = first.signals();
      const lastId = first.lastId();
      assert.ok(lastId, 'frames carry ids');
      assert.equal(Number(lastId), before.at(-1)!.seq);

      // More are created while no one listens.
      await eventually(
        'more messages sent while disconnected',
        () => sent.length >= messageTexts(before).length + 5,
      );
      const second = await open(bot, conversationId, owner.user.key, lastId);
      assert.equal(second.status, 200);
      await sending;
      await second.waitUntil(`message r${TOTAL - 1}`, (s) =>
        messageTexts(s.signals()).includes(`r${TOTAL - 1}`),
      );
      const after = second.signals();
      assert.equal(
        after[0]!.seq,
        Number(lastId) + 1,
        'the resumed stream starts right after the last id seen',
      );
      assertConsecutive(after);
      const all = [...messageTexts(before), ...messageTexts(after)];
      assert.deepEqual(all, sent, 'every message exactly once, in order');

      // Live messages keep coming on the resumed stream.
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'live' } });
      await second.waitUntil('the live message', (s) => messageTexts(s.signals()).includes('live'));
      assert.equal(messageTexts(second.signals()).filter((x) => x === 'live').length, 1);
    });

    test('Last-Event-ID after a quiet drop, as a query parameter too; an id from the future resumes from now', async () => {
      const { bot, owner, conversationId } = await setup('listen-resume-2');
      const stream = await open(bot, conversationId, owner.user.key);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'a' } });
      await stream.waitUntil('a', (s) => messageTexts(s.signals()).includes('a'));
      const lastId = stream.lastId()!;
      stream.destroy();
      await stream.closed;
      for (const text of ['b', 'c', 'd'])
        await owner.createMessage({ conversationId, payload: { type: 'text', text } });

      const byQuery = await openSse(`${listenUrl(bot.webhookUrl, conversationId)}?lastEventId=${lastId}`, {
        userKey: owner.user.key,
      });
      streams.push(byQuery);
      await byQuery.waitUntil('b, c and d', (s) => messageTexts(s.signals()).length >= 3);
      assert.deepEqual(messageTexts(byQuery.signals()), ['b', 'c', 'd']);
      byQuery.destroy();

      const byHeader = await open(bot, conversationId, owner.user.key, lastId);
      await byHeader.waitUntil('b, c and d', (s) => messageTexts(s.signals()).length >= 3);
      assert.deepEqual(messageTexts(byHeader.signals()), ['b', 'c', 'd']);
      byHeader.destroy();

      const future = await open(bot, conversationId, owner.user.key, 999_999);
      assert.equal(future.status, 200);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'e' } });
      await future.waitUntil('e', (s) => messageTexts(s.signals()).includes('e'));
      assert.deepEqual(messageTexts(future.signals()), ['e'], 'nothing replayed, the new message delivered');
      future.destroy();
    });

    test('Last-Event-ID with more missed signals than one page of the log: every one, in order', async () => {
      const { bot, owner, conversationId, runtimeId } = await setup('listen-resume-long');
      const stream = await open(bot, conversationId, owner.user.key);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'first' } });
      await stream.waitUntil('first', (s) => messageTexts(s.signals()).includes('first'));
      const lastId = stream.lastId()!;
      stream.destroy();
      await stream.closed;
      // 1,200 signals missed: more than the log's page (500), and than the 1,000 that used to be replayed.
      const missed = Array.from({ length: 1200 }, (_, i) => `m${i}`);
      for (let i = 0; i < missed.length; i += 20) {
        await Promise.all(
          missed.slice(i, i + 20).map((text) =>
            bot.client.createMessage({
              conversationId: runtimeId,
              userId: bot.botId,
              type: 'text',
              payload: { text },
              tags: {},
            }),
          ),
        );
      }
      const resumed = await open(bot, conversationId, owner.user.key, lastId);
      await resumed.waitUntil('1,200 messages', (s) => messageTexts(s.signals()).length >= 1200, 30_000);
      assert.deepEqual(new Set(messageTexts(resumed.signals())), new Set(missed), 'every missed message');
      assert.equal(resumed.signals()[0]!.seq, Number(lastId) + 1, 'from the one after the last received');
      assertConsecutive(resumed.signals());
      resumed.destroy();
    });

    test('Last-Event-ID older than the log keeps: a signals_missed frame says which, then the rest', async () => {
      const { bot, owner, conversationId, runtimeId } = await setup('listen-resume-pruned');
      for (const text of ['a', 'b', 'c', 'd'])
        await owner.createMessage({ conversationId, payload: { type: 'text', text } });
      const { rows } = await sql<{ seq: number | string }>`select seq from conversation_signals
        where conversation_id = ${runtimeId} order by seq`.execute(t.server.store.db);
      const seqs = rows.map((r) => Number(r.seq));
      const first = seqs[0]!;
      const beforeLast = seqs.at(-2)!;
      assert.ok(seqs.length >= 4, `a signal per message at least (${seqs.length})`);
      // The retention sweep let all go but the last (the message 'd').
      await sql`delete from conversation_signals where conversation_id = ${runtimeId} and seq <= ${beforeLast}`.execute(
        t.server.store.db,
      );
      const resumed = await open(bot, conversationId, owner.user.key, first);
      await resumed.waitUntil('d', (s) => messageTexts(s.signals()).includes('d'));
      const frames = resumed.frames.filter((f) => f.data !== 'ping');
      assert.deepEqual(JSON.parse(frames[0]!.data), {
        type: 'signals_missed',
        data: { from: first + 1, to: beforeLast },
      });
      assert.equal(
        frames[0]!.id,
        String(beforeLast),
        'its id is the last one missed: a reconnect goes on from there',
      );
      assert.deepEqual(messageTexts(resumed.signals()), ['d']);
      resumed.destroy();
    });

    test('the key in the query (x-user-key=…) opens the stream, for clients that cannot send headers', async () => {
      const { bot, owner, conversationId } = await setup('listen-query-key');
      const url = `${listenUrl(bot.webhookUrl, conversationId)}?x-user-key=${encodeURIComponent(owner.user.key)}`;
      const stream = await openSse(url, {});
      streams.push(stream);
      assert.equal(stream.status, 200);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'via query' } });
      await stream.waitUntil('the message', (s) => messageTexts(s.signals()).includes('via query'));
      stream.destroy();
      // Only the event stream takes it from the query: other routes still need the header.
      const res = await fetch(`${bot.webhookUrl}/users/me?x-user-key=${encodeURIComponent(owner.user.key)}`);
      assert.equal(res.status, 401);
      const wrong = await openSse(`${listenUrl(bot.webhookUrl, conversationId)}?x-user-key=nope`, {});
      streams.push(wrong);
      assert.equal(wrong.status, 401);
    });

    test('listeners of one conversation see nothing of another, and a bad payload never reaches them', async () => {
      const { bot, owner, conversationId } = await setup('listen-apart');
      await owner.createConversation({ id: 'other-room' });
      const stream = await open(bot, conversationId, owner.user.key);
      await owner.createMessage({
        conversationId: 'other-room',
        payload: { type: 'text', text: 'elsewhere' },
      });
      const refused = await rawChat(bot.webhookUrl, 'POST', '/messages', {
        key: owner.user.key,
        body: { conversationId, payload: { type: 'text', text: '' } },
      });
      assert.equal(refused.status, 400);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'here' } });
      await stream.waitUntil('here', (s) => messageTexts(s.signals()).includes('here'));
      assert.deepEqual(messageTexts(stream.signals()), ['here']);
    });

    test('a conversation id with "/" and "\\" can be listened to, encoded', async () => {
      const bot = await createChatBot(t, 'listen-slash');
      const owner = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'o/w\\n' });
      const id = 'a/b\\c';
      await owner.createConversation({ id });
      const stream = await open(bot, encodeURIComponent(id), owner.user.key);
      assert.equal(stream.status, 200);
      await owner.createMessage({ conversationId: id, payload: { type: 'text', text: 'slashed' } });
      const signal = await stream.waitForSignal('the message', (s) => s.type === 'message_created');
      assert.equal(signal.data.conversationId, id);
      assert.equal(signal.data.userId, 'o/w\\n');
    });

    test('a listener of a conversation made with a random id uses that id', async () => {
      const bot = await createChatBot(t, 'listen-random');
      const owner = await chat.Client.connect({ apiUrl: bot.webhookUrl });
      const { conversation } = await owner.createConversation({});
      const listener = await listen(owner, conversation.id);
      const seen = record(listener);
      const text = unique('random');
      await owner.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } });
      await eventually('the message', () => messageTexts(seen.signals).includes(text));
      const signal = seen.signals.find((s) => s.type === 'message_created')!;
      assert.equal(signal.data.conversationId, conversation.id);
      assert.equal(signal.data.userId, owner.user.id);
      await listener.disconnect();
    });

    // Last: it restarts the server under the other tests' streams.
    test('Last-Event-ID across a server restart: what was created meanwhile is delivered', async () => {
      const { bot, owner, conversationId } = await setup('listen-restart');
      const stream = await open(bot, conversationId, owner.user.key);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'before' } });
      await stream.waitUntil('before', (s) => messageTexts(s.signals()).includes('before'));
      const lastId = stream.lastId()!;
      await t.restart();
      await stream.closed;
      for (const text of ['during-1', 'during-2']) {
        await owner.createMessage({ conversationId, payload: { type: 'text', text } });
      }
      const resumed = await open(bot, conversationId, owner.user.key, lastId);
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'after' } });
      await resumed.waitUntil('after', (s) => messageTexts(s.signals()).includes('after'));
      assert.deepEqual(messageTexts(resumed.signals()), ['during-1', 'during-2', 'after']);
      assert.equal(resumed.signals()[0]!.seq, Number(lastId) + 1, 'the numbering survives the restart');
    });
  });
}
