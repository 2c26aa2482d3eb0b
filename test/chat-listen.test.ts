import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { sql } from 'kysely';
import { LISTEN_PROTOCOLS, openListener } from './helpers/listen.ts';
import type { Listener, ListenProtocol, OpenListenerOptions } from './helpers/listen.ts';
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

/** Asserts the signal numbers of a stream are integers that go up by one, from its first. */
function assertConsecutive(signals: SseSignal[]): void {
  assert.ok(
    signals.every((s) => Number.isSafeInteger(s.seq) && s.seq > 0),
    'every signal carries its number',
  );
  for (let i = 1; i < signals.length; i++) {
    assert.equal(signals[i]!.seq, signals[0]!.seq + i, `frame ${i} is numbered right after the one before`);
  }
}

/** Resolves with `promise`, or fails with `what` after `ms`. */
async function within<T>(what: string, promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const CAROUSEL = {
  type: 'carousel' as const,
  items: [
    {
      type: 'card' as const,
      title: 'c',
      actions: [{ action: 'say' as const, label: 'l', value: 'v' }],
    },
  ],
};

/** The eight signal types in the order `produceEverySignal` causes them. */
const EVERY_SIGNAL_TYPE = [
  'participant_added',
  'message_created',
  'message_created',
  'message_created',
  'event_created',
  'event_created',
  'message_deleted',
  'participant_removed',
];

for (const store of await testStores()) {
  describe(`chat live listening (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let streams: SseStream[] = [];
    let opened: Listener[] = [];
    let official: chat.SignalListener[] = [];
    before(async () => {
      t = await startTestServer(store, { chatPingIntervalMs: '300' });
    });
    // A test's listeners end with it: their pings would load the tests after it.
    afterEach(async () => {
      for (const s of streams) s.destroy();
      for (const l of opened) l.destroy();
      for (const l of official) await l.disconnect();
      streams = [];
      opened = [];
      official = [];
    });
    after(async () => {
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

    /** A raw listener over `protocol`, ended after the test. */
    async function open(
      protocol: ListenProtocol,
      bot: ChatBot,
      conversationId: string,
      userKey: string | undefined,
      options: Omit<OpenListenerOptions, 'userKey'> = {},
    ) {
      const listener = await openListener(protocol, listenUrl(bot.webhookUrl, conversationId), {
        ...(userKey !== undefined && { userKey }),
        ...options,
      });
      opened.push(listener);
      return listener;
    }

    /** The official client's listener (server-sent events), ended after the test. */
    async function listen(client: chat.AuthenticatedClient, id: string) {
      const listener = await client.listenConversation({ id });
      official.push(listener);
      return listener;
    }

    /**
     * Causes one signal of every type on a `setup` conversation, in the order of EVERY_SIGNAL_TYPE: bob
     * joins, bob, the bot and the owner write, the owner and the bot send events, bob deletes his message
     * and is removed. Returns what the calls answered, for `assertEverySignal`.
     */
    async function produceEverySignal(ctx: Awaited<ReturnType<typeof setup>>) {
      const { bot, owner, conversationId, runtimeId } = ctx;
      const bob = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'bob' });
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
      const { message: rich } = await owner.createMessage({ conversationId, payload: CAROUSEL });
      const { event: userEvent } = await owner.createEvent({ conversationId, payload: { typing: true } });
      const { event: botEvent } = await bot.client.createEvent({
        type: 'custom:ping',
        payload: { from: 'bot' },
        conversationId: runtimeId,
      });
      await bob.deleteMessage({ id: fromBob.id });
      await owner.removeParticipant({ conversationId, userId: 'bob' });
      return { botId: bot.botId, fromBob, fromBot, rich, userEvent, botEvent };
    }

    /** Asserts the signals `produceEverySignal` caused, as a listener received them. */
    function assertEverySignal(
      signals: Received[],
      made: Awaited<ReturnType<typeof produceEverySignal>>,
    ): void {
      assert.deepEqual(
        signals.map((s) => s.type),
        EVERY_SIGNAL_TYPE,
      );
      const [added, bobMsg, botMsg, richMsg, userEvt, botEvt, deleted, removed] = signals.map((s) => s.data);
      assert.deepEqual(added, { conversationId: 'room', participantId: 'bob' });
      assert.deepEqual(bobMsg, {
        id: made.fromBob.id,
        createdAt: made.fromBob.createdAt,
        payload: { type: 'text', text: 'hi from bob' },
        userId: 'bob',
        conversationId: 'room',
        metadata: { m: 1 },
        isBot: false,
      });
      assert.equal(botMsg!.id, made.fromBot.id);
      assert.equal(botMsg!.isBot, true);
      assert.equal(botMsg!.userId, made.botId);
      assert.equal(botMsg!.conversationId, 'room');
      assert.deepEqual(botMsg!.payload, { type: 'text', text: 'hi from the bot' });
      assert.equal(richMsg!.id, made.rich.id);
      assert.equal(richMsg!.isBot, false);
      assert.deepEqual(richMsg!.payload, CAROUSEL);
      assert.deepEqual(userEvt, {
        id: made.userEvent.id,
        createdAt: made.userEvent.createdAt,
        payload: { typing: true },
        conversationId: 'room',
        userId: 'owner',
        isBot: false,
      });
      assert.equal(botEvt!.id, made.botEvent.id);
      assert.equal(botEvt!.isBot, true);
      assert.deepEqual(botEvt!.payload, { from: 'bot' });
      assert.deepEqual(deleted, { id: made.fromBob.id, conversationId: 'room', userId: 'bob' });
      assert.deepEqual(removed, { conversationId: 'room', participantId: 'bob' });
      for (const s of [bobMsg, botMsg, richMsg, userEvt, botEvt]) assert.match(String(s!.createdAt), UTC);
    }

    let backlog: ReturnType<typeof makeBacklog> | undefined;
    /**
     * A conversation where a listener received 'first', then missed 1,200 signals: more than two of the
     * log's pages (500), and than the 1,000 that used to be replayed. Made once (it takes seconds), for
     * each protocol's resume test.
     */
    const missedBacklog = () => (backlog ??= makeBacklog());
    async function makeBacklog() {
      const { bot, owner, conversationId, runtimeId } = await setup('listen-resume-long');
      const first = await openListener('sse', listenUrl(bot.webhookUrl, conversationId), {
        userKey: owner.user.key,
      });
      await owner.createMessage({ conversationId, payload: { type: 'text', text: 'first' } });
      await first.waitUntil('first', (l) => messageTexts(l.signals()).includes('first'));
      const lastId = first.lastId()!;
      first.destroy();
      await first.closed;
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
      return { bot, owner, conversationId, lastId, missed };
    }

    // What only one protocol has: the SSE wire format, the official client (it speaks SSE only), and the
    // WebSocket's messages against the SSE frames.

    test('the stream answers 200 text/event-stream with unnamed {type,data} frames numbered by id', async () => {
      const { bot, owner, conversationId } = await setup('listen-wire');
      const stream = await openSse(listenUrl(bot.webhookUrl, conversationId), { userKey: owner.user.key });
      streams.push(stream);
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

    test('a WebSocket listener is upgraded (101) and gets a text message per signal: {type,data} and id, a string', async () => {
      const { bot, owner, conversationId } = await setup('listen-ws-wire');
      const socket = await open('websocket', bot, conversationId, owner.user.key);
      assert.equal(socket.opened, true);
      assert.equal(socket.status, 101);
      for (let i = 0; i < 3; i++) {
        await owner.createMessage({ conversationId, payload: { type: 'text', text: `w${i}` } });
      }
      await socket.waitUntil('three messages', (l) => messageTexts(l.signals()).length === 3);
      assert.equal(socket.raw().length, 3, 'one message per signal');
      for (const text of socket.raw()) {
        const message = JSON.parse(text) as Record<string, unknown>;
        assert.deepEqual(Object.keys(message).sort(), ['data', 'id', 'type']);
        assert.equal(typeof message.id, 'string', 'the id is a string, as an EventSource’s lastEventId is');
        assert.match(message.id as string, /^\d+$/);
      }
      assert.equal(socket.binaryMessages, 0, 'text messages only');
      assertConsecutive(socket.signals());
      assert.deepEqual(messageTexts(socket.signals()), ['w0', 'w1', 'w2']);
    });

    test('a WebSocket message minus its id is the SSE data: JSON of the same signal, for every signal type', async () => {
      const ctx = await setup('listen-ws-same');
      const sse = await open('sse', ctx.bot, ctx.conversationId, ctx.owner.user.key);
      const socket = await open('websocket', ctx.bot, ctx.conversationId, ctx.owner.user.key);
      await produceEverySignal(ctx);
      for (const listener of [sse, socket]) {
        await listener.waitUntil('every signal', (l) => l.signals().length >= EVERY_SIGNAL_TYPE.length);
      }
      assert.equal(socket.raw().length, sse.raw().length, 'as many messages as frames');
      assert.deepEqual(
        socket.signals().map((s) => s.seq),
        sse.signals().map((s) => s.seq),
        'the same signals, with the same numbers (the SSE id: field, the WebSocket id)',
      );
      socket.raw().forEach((text, i) => {
        const { id, ...rest } = JSON.parse(text) as Record<string, unknown>;
        assert.equal(id, String(sse.signals()[i]!.seq));
        assert.deepEqual(rest, JSON.parse(sse.raw()[i]!), `message ${i} is the SSE frame's data plus its id`);
      });
      assert.deepEqual(
        socket.signals().map((s) => s.type),
        EVERY_SIGNAL_TYPE,
      );
    });

    test('the official client receives all five signal types, with isBot and UTC createdAt, in order', async () => {
      const ctx = await setup('listen-client');
      const listener = await listen(ctx.owner, ctx.conversationId);
      const seen = record(listener);
      const made = await produceEverySignal(ctx);
      await eventually('eight signals', () => seen.signals.length >= 8);
      assert.deepEqual(seen.errors, []);
      assertEverySignal(seen.signals, made);
    });

    test('the official client sees a ping as unknown "ping", and is refused (403) a conversation it is not in', async () => {
      const { bot, owner, conversationId } = await setup('listen-client-ping');
      const listener = await listen(owner, conversationId);
      const seen = record(listener);
      await eventually('a ping through the official client', () => seen.pings > 0, 5000);
      assert.deepEqual(seen.errors, []);
      const stranger = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'stranger' });
      await assert.rejects(
        stranger.listenConversation({ id: conversationId }),
        (err: { status?: number }) => {
          assert.equal(err.status, 403);
          return true;
        },
      );
    });

    test('the official client of a removed participant gets participant_removed, then disconnects', async () => {
      const { bot, owner, conversationId } = await setup('listen-client-remove');
      const bob = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'bob' });
      await owner.addParticipant({ conversationId, userId: 'bob' });
      const bobListener = await listen(bob, conversationId);
      const bobSeen = record(bobListener);
      await owner.removeParticipant({ conversationId, userId: 'bob' });
      await eventually(
        'bob’s official listener to disconnect',
        () => bobListener.status === 'disconnected',
        5000,
      );
      assert.ok(bobSeen.errors.length > 0, 'the client reports the end of the stream as an error');
      assert.ok(bobSeen.signals.some((s) => s.type === 'participant_removed'));
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
    });

    // The same contract over both protocols.
    for (const protocol of LISTEN_PROTOCOLS) {
      test(`${protocol}: every signal type, with isBot and UTC createdAt, in order and numbered`, async () => {
        const ctx = await setup(`listen-every-${protocol}`);
        const listener = await open(protocol, ctx.bot, ctx.conversationId, ctx.owner.user.key);
        assert.equal(listener.opened, true);
        const made = await produceEverySignal(ctx);
        await listener.waitUntil('eight signals', (l) => l.signals().length >= EVERY_SIGNAL_TYPE.length);
        assertEverySignal(listener.signals(), made);
        assertConsecutive(listener.signals());
        assert.equal(listener.ended, false, 'the owner’s listener stays open');
      });

      test(`${protocol}: a ping comes at the configured interval`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-ping-${protocol}`);
        const listener = await open(protocol, bot, conversationId, owner.user.key);
        const started = Date.now();
        await listener.waitUntil('two pings', (l) => l.pings() >= 2, 5000);
        const elapsed = Date.now() - started;
        assert.ok(elapsed >= 450, `two pings 300 ms apart take more than 450 ms (${elapsed} ms)`);
        assert.deepEqual(listener.raw(), [], 'nothing but pings on a quiet conversation');
      });

      test(`${protocol}: listening needs a valid key and participation: 401, 403 and 404 otherwise, before any upgrade`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-access-${protocol}`);
        const stranger = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'stranger' });
        const refusals: [Listener, number, string][] = [
          [await open(protocol, bot, conversationId, stranger.user.key), 403, 'Forbidden'],
          [await open(protocol, bot, conversationId, 'not-a-key'), 401, 'Unauthorized'],
          [await open(protocol, bot, conversationId, undefined), 401, 'Unauthorized'],
          [await open(protocol, bot, 'no-such-room', owner.user.key), 404, 'ResourceNotFound'],
        ];
        for (const [listener, status, type] of refusals) {
          assert.equal(listener.opened, false);
          assert.equal(listener.status, status);
          assert.equal(listener.error?.type, type);
          assert.equal(listener.error?.code, status);
          assert.equal(typeof listener.error?.message, 'string');
          assert.deepEqual(listener.signals(), []);
        }
        const allowed = await open(protocol, bot, conversationId, owner.user.key);
        assert.equal(allowed.status, protocol === 'sse' ? 200 : 101);
      });

      test(`${protocol}: removeParticipant ends the removed user’s listener after participant_removed; others go on`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-remove-${protocol}`);
        const bob = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'bob' });
        await owner.addParticipant({ conversationId, userId: 'bob' });
        const bobListener = await open(protocol, bot, conversationId, bob.user.key);
        const ownerListener = await open(protocol, bot, conversationId, owner.user.key);

        await owner.removeParticipant({ conversationId, userId: 'bob' });
        await bobListener.waitForSignal('participant_removed', (s) => s.type === 'participant_removed');
        const end = await within('the end of bob’s listener', bobListener.closed);
        if (protocol === 'websocket') assert.equal(end.code, 1000, 'a normal close, from the server');
        assert.deepEqual(bobListener.signals().at(-1), {
          seq: bobListener.signals().at(-1)!.seq,
          type: 'participant_removed',
          data: { conversationId: 'room', participantId: 'bob' },
        });

        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'after' } });
        await ownerListener.waitUntil('the owner’s message', (l) =>
          messageTexts(l.signals()).includes('after'),
        );
        assert.equal(ownerListener.ended, false, 'the owner’s listener is still open');
        assert.equal(
          ownerListener.signals().filter((s) => s.type === 'participant_removed').length,
          1,
          'the owner saw bob go',
        );
        assert.equal(
          (await open(protocol, bot, conversationId, bob.user.key)).status,
          403,
          'bob cannot listen again',
        );
      });

      test(`${protocol}: 20 concurrent senders and the bot: every listener gets every message once, in one creation order`, async () => {
        const { bot, owner, conversationId, runtimeId } = await setup(`listen-order-${protocol}`);
        const senders = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            chat.Client.connect({ apiUrl: bot.webhookUrl, userId: `sender-${i}` }),
          ),
        );
        for (const s of senders) await owner.addParticipant({ conversationId, userId: s.user.id });
        const raw = [
          await open(protocol, bot, conversationId, owner.user.key),
          await open(protocol, bot, conversationId, owner.user.key),
        ];
        // The official client (SSE) beside them: both protocols give the one order.
        const listener = await listen(owner, conversationId);
        const seen = record(listener);
        assert.equal(raw[0]!.signals().length, 0, 'a new listener starts from now');

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
        for (const l of raw) {
          await l.waitUntil(`${total} messages`, (x) => messageTexts(x.signals()).length >= total, 20_000);
        }
        await eventually(
          `${total} messages through the client`,
          () => messageTexts(seen.signals).length >= total,
          20_000,
        );
        // Late frames would be duplicates: give them a moment to show up.
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'end' } });
        for (const l of raw) {
          await l.waitUntil('the end marker', (x) => messageTexts(x.signals()).includes('end'));
        }
        await eventually('the end marker through the client', () =>
          messageTexts(seen.signals).includes('end'),
        );

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
        const replay = await open(protocol, bot, conversationId, owner.user.key, { lastEventId: 0 });
        await replay.waitUntil('the replay', (l) => messageTexts(l.signals()).includes('end'));
        assert.deepEqual(messageTexts(replay.signals()), order);
      });

      test(`${protocol}: a listener dropped mid-burst resumes with what it missed, nothing lost or repeated`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-resume-${protocol}`);
        const first = await open(protocol, bot, conversationId, owner.user.key);
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
        await first.waitUntil('ten messages', (l) => messageTexts(l.signals()).length >= 10);
        first.destroy();
        await first.closed;
        const before = first.signals();
        const lastId = first.lastId();
        assert.ok(lastId, 'signals carry ids');
        assert.equal(Number(lastId), before.at(-1)!.seq);
        assert.ok(messageTexts(before).length < TOTAL, 'dropped before the burst ended');

        // More are created while no one listens.
        await eventually(
          'more messages sent while disconnected',
          () => sent.length >= messageTexts(before).length + 5,
        );
        const second = await open(protocol, bot, conversationId, owner.user.key, { lastEventId: lastId });
        assert.equal(second.opened, true);
        await sending;
        await second.waitUntil(`message r${TOTAL - 1}`, (l) =>
          messageTexts(l.signals()).includes(`r${TOTAL - 1}`),
        );
        const after = second.signals();
        assert.equal(
          after[0]!.seq,
          Number(lastId) + 1,
          'the resumed listener starts right after the last id seen',
        );
        assertConsecutive(after);
        const all = [...messageTexts(before), ...messageTexts(after)];
        assert.deepEqual(all, sent, 'every message exactly once, in order');

        // Live messages keep coming on the resumed listener.
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'live' } });
        await second.waitUntil('the live message', (l) => messageTexts(l.signals()).includes('live'));
        assert.equal(messageTexts(second.signals()).filter((x) => x === 'live').length, 1);
      });

      test(`${protocol}: lastEventId after a quiet drop, as a query parameter${protocol === 'sse' ? ' and the header' : ''}; an id from the future resumes from now`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-resume-2-${protocol}`);
        const first = await open(protocol, bot, conversationId, owner.user.key);
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'a' } });
        await first.waitUntil('a', (l) => messageTexts(l.signals()).includes('a'));
        const lastId = first.lastId()!;
        first.destroy();
        await first.closed;
        for (const text of ['b', 'c', 'd'])
          await owner.createMessage({ conversationId, payload: { type: 'text', text } });

        // Every way this protocol names the resume point (a WebSocket has the query parameter only).
        const ways = protocol === 'sse' ? (['query', 'header'] as const) : (['query'] as const);
        for (const lastEventIdIn of ways) {
          const resumed = await open(protocol, bot, conversationId, owner.user.key, {
            lastEventId: lastId,
            lastEventIdIn,
          });
          await resumed.waitUntil(
            `b, c and d (${lastEventIdIn})`,
            (l) => messageTexts(l.signals()).length >= 3,
          );
          assert.deepEqual(messageTexts(resumed.signals()), ['b', 'c', 'd'], `resumed by ${lastEventIdIn}`);
          assert.equal(resumed.signals()[0]!.seq, Number(lastId) + 1);
          resumed.destroy();
        }

        const future = await open(protocol, bot, conversationId, owner.user.key, { lastEventId: 999_999 });
        assert.equal(future.opened, true);
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'e' } });
        await future.waitUntil('e', (l) => messageTexts(l.signals()).includes('e'));
        assert.deepEqual(
          messageTexts(future.signals()),
          ['e'],
          'nothing replayed, the new message delivered',
        );
      });

      test(`${protocol}: lastEventId with more missed signals than one page of the log: every one, in order`, async () => {
        const { bot, owner, conversationId, lastId, missed } = await missedBacklog();
        const resumed = await open(protocol, bot, conversationId, owner.user.key, { lastEventId: lastId });
        await resumed.waitUntil('1,200 messages', (l) => messageTexts(l.signals()).length >= 1200, 30_000);
        // Sent 20 at a time, their order within a batch is the store's: the set, and consecutive numbers.
        assert.equal(messageTexts(resumed.signals()).length, 1200, 'none twice');
        assert.deepEqual(new Set(messageTexts(resumed.signals())), new Set(missed), 'every missed message');
        assert.equal(resumed.signals()[0]!.seq, Number(lastId) + 1, 'from the one after the last received');
        assertConsecutive(resumed.signals());
      });

      test(`${protocol}: lastEventId older than the log keeps: a signals_missed message says which, then the rest`, async () => {
        const { bot, owner, conversationId, runtimeId } = await setup(`listen-resume-pruned-${protocol}`);
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
        const resumed = await open(protocol, bot, conversationId, owner.user.key, { lastEventId: first });
        await resumed.waitUntil('d', (l) => messageTexts(l.signals()).includes('d'));
        const missed = { type: 'signals_missed', data: { from: first + 1, to: beforeLast } };
        // Over SSE, the id: field; over a WebSocket, the message's id: the last one missed, so that a
        // reconnect goes on from there.
        assert.deepEqual(
          JSON.parse(resumed.raw()[0]!),
          protocol === 'sse' ? missed : { ...missed, id: String(beforeLast) },
        );
        assert.equal(resumed.signals()[0]!.seq, beforeLast, 'its id is the last one missed');
        assert.equal(resumed.signals()[1]!.seq, beforeLast + 1, 'then the signals kept, from the next one');
        assert.deepEqual(messageTexts(resumed.signals()), ['d']);
        assert.equal(resumed.signals().length, 2);
      });

      test(`${protocol}: the key in the query (x-user-key=…) opens the listener, for clients that cannot send headers`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-query-key-${protocol}`);
        const listener = await open(protocol, bot, conversationId, owner.user.key, { keyInQuery: true });
        assert.equal(listener.opened, true);
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'via query' } });
        await listener.waitUntil('the message', (l) => messageTexts(l.signals()).includes('via query'));
        // Only the listener takes it from the query: other routes still need the header.
        const res = await fetch(
          `${bot.webhookUrl}/users/me?x-user-key=${encodeURIComponent(owner.user.key)}`,
        );
        assert.equal(res.status, 401);
        const wrong = await open(protocol, bot, conversationId, 'nope', { keyInQuery: true });
        assert.equal(wrong.status, 401);
        const stranger = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'stranger' });
        const refused = await open(protocol, bot, conversationId, stranger.user.key, { keyInQuery: true });
        assert.equal(refused.status, 403, 'a good key from the query is still checked for participation');
      });

      test(`${protocol}: listeners of one conversation see nothing of another, and a bad payload never reaches them`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-apart-${protocol}`);
        await owner.createConversation({ id: 'other-room' });
        const listener = await open(protocol, bot, conversationId, owner.user.key);
        const other = await open(protocol, bot, 'other-room', owner.user.key);
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
        await listener.waitUntil('here', (l) => messageTexts(l.signals()).includes('here'));
        await other.waitUntil('elsewhere', (l) => messageTexts(l.signals()).includes('elsewhere'));
        assert.deepEqual(messageTexts(listener.signals()), ['here']);
        assert.deepEqual(messageTexts(other.signals()), ['elsewhere']);
      });

      test(`${protocol}: a conversation id with "/" and "\\" can be listened to, encoded`, async () => {
        const bot = await createChatBot(t, `listen-slash-${protocol}`);
        const owner = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'o/w\\n' });
        const id = 'a/b\\c';
        await owner.createConversation({ id });
        const listener = await open(protocol, bot, encodeURIComponent(id), owner.user.key);
        assert.equal(listener.opened, true);
        await owner.createMessage({ conversationId: id, payload: { type: 'text', text: 'slashed' } });
        const signal = await listener.waitForSignal('the message', (s) => s.type === 'message_created');
        assert.equal(signal.data.conversationId, id);
        assert.equal(signal.data.userId, 'o/w\\n');
      });

      test(`${protocol}: a client too slow to read is let go past 4 MiB buffered${protocol === 'websocket' ? ' (close code 1013)' : ''}, and resumes`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-slow-${protocol}`);
        const openStreams = async () => (await t.server.app.metrics.openStreams.get()).values[0]?.value ?? 0;
        // The other tests' listeners are gone (afterEach): wait for the server to notice, so that only this one counts.
        const deadline = Date.now() + 5000;
        while ((await openStreams()) !== 0 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
        const slow = await open(protocol, bot, conversationId, owner.user.key);
        assert.equal(await openStreams(), 1, 'this listener is the only one open');
        slow.pause();

        // 256 KiB messages until the server lets the listener go (or far more than it should take).
        const big = 'x'.repeat(256 * 1024);
        const sent: string[] = [];
        while ((await openStreams()) === 1 && sent.length < 200) {
          const text = `${sent.length}:${big}`;
          await owner.createMessage({ conversationId, payload: { type: 'text', text } });
          sent.push(text);
        }
        assert.equal(
          await openStreams(),
          0,
          `the server let the listener go (after ${sent.length} messages)`,
        );
        // Sent after the server let it go: these reach only a listener that resumes.
        for (const text of ['later-1', 'later-2']) {
          await owner.createMessage({ conversationId, payload: { type: 'text', text } });
          sent.push(text);
        }

        // What the server had written before the close still arrives (4 MiB and more), then the end.
        slow.resume();
        const end = await within('the end of the slow listener', slow.closed, 20_000);
        if (protocol === 'websocket') assert.equal(end.code, 1013, 'try again later');
        const got = messageTexts(slow.signals());
        assert.ok(
          got.length * big.length > 4 * 1024 * 1024,
          `what was buffered is delivered (${got.length})`,
        );
        assert.ok(got.length <= sent.length - 2, 'nothing after the close');
        assert.deepEqual(got, sent.slice(0, got.length), 'what it got, in order');
        assertConsecutive(slow.signals());

        const resumed = await open(protocol, bot, conversationId, owner.user.key, {
          lastEventId: slow.lastId()!,
        });
        await resumed.waitUntil(
          'the rest',
          (l) => messageTexts(l.signals()).length >= sent.length - got.length,
          20_000,
        );
        assert.deepEqual([...got, ...messageTexts(resumed.signals())], sent, 'the rest, once, in order');
      });
    }

    // Last: they restart the server under the other tests' listeners.
    for (const protocol of LISTEN_PROTOCOLS) {
      test(`${protocol}: the server stopping ends listeners${protocol === 'websocket' ? ' (close code 1001)' : ''}; lastEventId delivers what was created meanwhile`, async () => {
        const { bot, owner, conversationId } = await setup(`listen-restart-${protocol}`);
        const listener = await open(protocol, bot, conversationId, owner.user.key);
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'before' } });
        await listener.waitUntil('before', (l) => messageTexts(l.signals()).includes('before'));
        const lastId = listener.lastId()!;
        await t.restart();
        const end = await within('the end of the listener', listener.closed);
        if (protocol === 'websocket') assert.equal(end.code, 1001, 'going away');
        for (const text of ['during-1', 'during-2']) {
          await owner.createMessage({ conversationId, payload: { type: 'text', text } });
        }
        const resumed = await open(protocol, bot, conversationId, owner.user.key, { lastEventId: lastId });
        await owner.createMessage({ conversationId, payload: { type: 'text', text: 'after' } });
        await resumed.waitUntil('after', (l) => messageTexts(l.signals()).includes('after'));
        assert.deepEqual(messageTexts(resumed.signals()), ['during-1', 'during-2', 'after']);
        assert.equal(resumed.signals()[0]!.seq, Number(lastId) + 1, 'the numbering survives the restart');
      });
    }
  });
}
