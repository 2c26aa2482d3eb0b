import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { Client } from '@botpress/client';
import { Redis } from 'ioredis';
import pg from 'pg';
import { STORED_BUS_SECRET } from '../../src/bus/index.ts';
import { postgresChannel } from '../../src/bus/postgres.ts';
import { redisChannel } from '../../src/bus/redis.ts';
import { BusSeal } from '../../src/bus/signing.ts';
import { runParley } from '../helpers/process.ts';
import type { ParleyProcess } from '../helpers/process.ts';
import { LISTEN_PROTOCOLS, openListener } from '../helpers/listen.ts';
import type { Listener, ListenProtocol } from '../helpers/listen.ts';
import { eventually, listenUrl } from '../helpers/sse.ts';
import type { SseSignal } from '../helpers/sse.ts';
import { freshPostgresSchema, testDatabaseUrl, testStores } from '../helpers/stores.ts';
import { LISTENING, STARTS_WITHIN_MS } from '../helpers/serve-processes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const texts = (signals: { type: string; data: Record<string, unknown> }[]) =>
  signals.filter((s) => s.type === 'message_created').map((s) => (s.data.payload as { text: string }).text);

function assertConsecutive(signals: SseSignal[]): void {
  for (let i = 1; i < signals.length; i++) {
    assert.equal(signals[i]!.seq, signals[0]!.seq + i, `frame ${i} follows the one before`);
  }
}

/** What crosses between processes on each transport (the deployment's channels), by conversation id. */
interface Tap {
  count(conversationId: string): number;
  close(): Promise<void>;
}

/** The conversations of the signals one transport message carries (a batch of them), signed with the secret. */
function conversationsOf(seal: BusSeal, text: string): string[] {
  const opened = seal.open(text);
  assert.ok('body' in opened, `a message on the bus is signed with the deployment's secret: ${text}`);
  return (JSON.parse(opened.body) as { signals: { conversationId: string }[] }).signals.map(
    (signal) => signal.conversationId,
  );
}

async function tapRedis(seal: BusSeal): Promise<Tap> {
  const seen: string[] = [];
  const sub = new Redis(REDIS_URL, { lazyConnect: true });
  await sub.connect();
  await sub.subscribe(redisChannel(seal));
  sub.on('message', (_channel: string, text: string) => seen.push(...conversationsOf(seal, text)));
  return { count: (id) => seen.filter((x) => x === id).length, close: async () => sub.disconnect() };
}

async function tapPostgres(seal: BusSeal): Promise<Tap> {
  const seen: string[] = [];
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  await client.query(`listen ${postgresChannel(seal)}`);
  client.on('notification', (n) => {
    if (n.payload) seen.push(...conversationsOf(seal, n.payload));
  });
  return { count: (id) => seen.filter((x) => x === id).length, close: () => client.end() };
}

/** The bus secret the processes generated and keep in the store, when none is configured. */
async function storedBusSecret(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ value: string }>('select value from settings where key = $1', [
      STORED_BUS_SECRET,
    ]);
    assert.ok(rows[0], 'a bus secret is kept in the store');
    return rows[0].value;
  } finally {
    await client.end();
  }
}

/** The Redis setup's processes are given their secret; the LISTEN/NOTIFY setup's keep theirs in the store. */
const CONFIGURED_BUS_SECRET = randomBytes(32).toString('base64url');

const postgres = (await testStores()).find((s) => s.name === 'postgres')!;

for (const bus of ['redis', 'listen-notify'] as const) {
  describe(`chat across two parley serve processes (postgres, ${bus})`, { skip: postgres.skip }, () => {
    const token = `bp_pat_test_${randomBytes(24).toString('base64url')}`;
    let schema: Awaited<ReturnType<typeof freshPostgresSchema>>;
    const dirs: string[] = [];
    const procs: ParleyProcess[] = [];
    const streams: Listener[] = [];
    const taps: Tap[] = [];
    let urlA: string;
    let urlB: string;
    let workspaceId: string;
    let seal: BusSeal;

    async function serve(): Promise<{ proc: ParleyProcess; url: string }> {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-chat-mp-'));
      dirs.push(dir);
      const proc = runParley(['serve', '--port', '0', '--data-dir', dir], {
        DATABASE_URL: schema.url,
        PARLEY_ADMIN_TOKEN: token,
        LOG_LEVEL: 'info',
        ...(bus === 'redis' && { REDIS_URL, PARLEY_BUS_SECRET: CONFIGURED_BUS_SECRET }),
      });
      procs.push(proc);
      const [, url] = await proc.waitFor(LISTENING, STARTS_WITHIN_MS);
      return { proc, url: url! };
    }

    before(async () => {
      schema = await freshPostgresSchema();
      const a = await serve();
      urlA = a.url;
      workspaceId = (await a.proc.waitFor(/workspace id: (\S+)/))[1]!;
      // The second process starts on the store the first one set up: no second owner.
      const b = await serve();
      urlB = b.url;
      assert.doesNotMatch(b.proc.output(), /owner token/);
      seal = new BusSeal(bus === 'redis' ? CONFIGURED_BUS_SECRET : await storedBusSecret(schema.url));
    });

    after(async () => {
      for (const s of streams) s.destroy();
      for (const tap of taps) await tap.close();
      for (const proc of procs) {
        if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
        await proc.exited;
      }
      await schema?.drop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    });

    /** A bot made through process A, its webhook URL on each process, and a runtime client on A. */
    async function setup(name: string) {
      const admin = new Client({ apiUrl: urlA, token, workspaceId });
      const { bot } = await admin.createBot({ name });
      const { value } = await admin.createBotApiKey({ botId: bot.id });
      const runtime = new Client({ apiUrl: urlA, token: value, botId: bot.id });
      const entry = (await new Client({ apiUrl: urlB, token, workspaceId }).getBot({ id: bot.id })).bot
        .integrations.chat;
      assert.ok(entry, 'process B sees the channel made through A');
      assert.equal(entry.webhookUrl, `${urlB}/chat/${entry.webhookId}`);
      return {
        botId: bot.id,
        runtime,
        onA: `${urlA}/chat/${entry.webhookId}`,
        onB: `${urlB}/chat/${entry.webhookId}`,
      };
    }

    /** A listener over `protocol` on one process's webhook URL. */
    async function open(
      protocol: ListenProtocol,
      url: string,
      conversationId: string,
      userKey: string,
      lastEventId?: string,
    ) {
      const stream = await openListener(protocol, listenUrl(url, conversationId), {
        userKey,
        ...(lastEventId !== undefined && { lastEventId }),
      });
      assert.equal(stream.opened, true, `the listener opens (${stream.status})`);
      streams.push(stream);
      return stream;
    }

    test('users, keys and conversations made through one process are served by the other', async () => {
      const { onA, onB } = await setup('mp-share');
      const onFirst = await chat.Client.connect({ apiUrl: onA, userId: 'ada' });
      const onSecond = await chat.Client.connect({ apiUrl: onB, userKey: onFirst.user.key });
      assert.equal(onSecond.user.id, 'ada');
      assert.equal(onSecond.user.createdAt, onFirst.user.createdAt);
      await onFirst.createConversation({ id: 'shared' });
      assert.equal((await onSecond.getConversation({ id: 'shared' })).conversation.id, 'shared');
      const { message } = await onSecond.createMessage({
        conversationId: 'shared',
        payload: { type: 'text', text: 'via B' },
      });
      assert.equal((await onFirst.getMessage({ id: message.id })).message.id, message.id);
      // A key the second process signs is good on the first: both use one shared-mode secret.
      const madeOnB = await chat.Client.connect({ apiUrl: onB, userId: 'grace' });
      assert.equal((await chat.Client.connect({ apiUrl: onA, userKey: madeOnB.user.key })).user.id, 'grace');
    });

    for (const protocol of LISTEN_PROTOCOLS) {
      test(`${protocol}: 20 concurrent senders on both processes: listeners on each get every message once, in one order`, async () => {
        const { onA, onB, runtime, botId } = await setup(`mp-order-${protocol}`);
        const owner = await chat.Client.connect({ apiUrl: onA, userId: 'owner' });
        await owner.createConversation({ id: 'room' });
        const { conversations } = await runtime.listConversations({
          channel: 'channel',
          integrationName: 'chat',
        });
        const runtimeId = conversations[0]!.id;
        const senders = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            chat.Client.connect({ apiUrl: i % 2 === 0 ? onA : onB, userId: `sender-${i}` }),
          ),
        );
        for (const s of senders) await owner.addParticipant({ conversationId: 'room', userId: s.user.id });

        const onListenerB = await open(protocol, onB, 'room', owner.user.key);
        const onListenerA = await open(protocol, onA, 'room', owner.user.key);
        const clientOnB = await chat.Client.connect({ apiUrl: onB, userKey: owner.user.key });
        const listener = await clientOnB.listenConversation({ id: 'room' });
        const seen: { type: string; data: Record<string, unknown> }[] = [];
        listener.on('message_created', (data) => seen.push({ type: 'message_created', data }));

        const tapped = { redis: await tapRedis(seal), postgres: await tapPostgres(seal) };
        taps.push(tapped.redis, tapped.postgres);
        const PER_SENDER = 5;
        await Promise.all([
          ...senders.map(async (sender, i) => {
            for (let n = 0; n < PER_SENDER; n++) {
              await sender.createMessage({
                conversationId: 'room',
                payload: { type: 'text', text: `s${i}-${n}` },
              });
            }
          }),
          (async () => {
            for (let n = 0; n < PER_SENDER; n++) {
              await runtime.createMessage({
                conversationId: runtimeId,
                userId: botId,
                type: 'text',
                payload: { text: `bot-${n}` },
                tags: {},
              });
            }
          })(),
        ]);
        await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: 'end' } });
        const total = (senders.length + 1) * PER_SENDER + 1;
        for (const stream of [onListenerA, onListenerB]) {
          await stream.waitUntil(`${total} messages`, (s) => texts(s.signals()).includes('end'), 20_000);
        }
        await eventually('every message through the client on B', () => texts(seen).includes('end'), 20_000);

        const order = texts(onListenerB.signals());
        assert.equal(order.length, total, 'every message, once');
        assert.equal(new Set(order).size, total, 'no message twice');
        assert.deepEqual(texts(onListenerA.signals()), order, 'the listener on A sees the same order');
        assert.deepEqual(texts(seen), order, 'the official client on B sees the same order');
        assertConsecutive(onListenerB.signals());
        for (const prefix of [...senders.map((_, i) => `s${i}-`), 'bot-']) {
          assert.deepEqual(
            order.filter((x) => x.startsWith(prefix)),
            Array.from({ length: PER_SENDER }, (_, n) => `${prefix}${n}`),
            `${prefix} messages in the order sent`,
          );
        }
        assert.ok(
          onListenerB.signals().some((s) => s.data.isBot === true && s.data.userId === botId),
          'the bot’s replies through A reach B with isBot',
        );
        // The signals crossed through the transport of this setup, and only through it.
        const used = bus === 'redis' ? tapped.redis : tapped.postgres;
        const unused = bus === 'redis' ? tapped.postgres : tapped.redis;
        await eventually('the signals on the bus', () => used.count(runtimeId) >= total, 5000);
        assert.equal(unused.count(runtimeId), 0, `no signal went through the other transport than ${bus}`);
        await listener.disconnect();
      });

      test(`${protocol}: large messages, too big to travel on the bus, reach the other process whole and in order`, async () => {
        const { onA, onB } = await setup(`mp-large-${protocol}`);
        const owner = await chat.Client.connect({ apiUrl: onA, userId: 'owner' });
        await owner.createConversation({ id: 'room' });
        const onListenerB = await open(protocol, onB, 'room', owner.user.key);
        // Over the NOTIFY payload limit (8000 bytes), and over what Redis carries inline (512 KB); last, a
        // text that is small but grows past the limit as it is escaped twice (into the frame, then the
        // wire): last, so that no later signal's gap recovers it if it were lost.
        const sizes = [10 * 1024, 600 * 1024, 100, 20 * 1024];
        const sent = [...sizes.map((n, i) => `${i}:${'x'.repeat(n)}`), `4:${'"'.repeat(2500)}`];
        for (const text of sent)
          await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text } });
        await onListenerB.waitUntil(
          'the five messages',
          (s) => texts(s.signals()).length >= sent.length,
          20_000,
        );
        assert.deepEqual(texts(onListenerB.signals()), sent);
        assertConsecutive(onListenerB.signals());
      });

      test(`${protocol}: lastEventId: a listener dropped on A resumes on B with what it missed`, async () => {
        const { onA, onB } = await setup(`mp-resume-${protocol}`);
        const owner = await chat.Client.connect({ apiUrl: onA, userId: 'owner' });
        await owner.createConversation({ id: 'room' });
        const first = await open(protocol, onA, 'room', owner.user.key);
        const sent: string[] = [];
        for (let i = 0; i < 5; i++) {
          await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: `r${i}` } });
          sent.push(`r${i}`);
        }
        await first.waitUntil('five messages', (s) => texts(s.signals()).length === 5);
        first.destroy();
        await first.closed;
        const onB2 = await chat.Client.connect({ apiUrl: onB, userKey: owner.user.key });
        for (let i = 5; i < 10; i++) {
          await onB2.createMessage({ conversationId: 'room', payload: { type: 'text', text: `r${i}` } });
          sent.push(`r${i}`);
        }
        const second = await open(protocol, onB, 'room', owner.user.key, first.lastId());
        await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: 'r10' } });
        sent.push('r10');
        await second.waitUntil('r10', (s) => texts(s.signals()).includes('r10'));
        assert.deepEqual([...texts(first.signals()), ...texts(second.signals())], sent);
        assert.equal(second.signals()[0]!.seq, Number(first.lastId()) + 1);
      });

      test(`${protocol}: removeParticipant through A ends the removed user’s listener on B`, async () => {
        const { onA, onB } = await setup(`mp-remove-${protocol}`);
        const owner = await chat.Client.connect({ apiUrl: onA, userId: 'owner' });
        const bob = await chat.Client.connect({ apiUrl: onB, userId: 'bob' });
        await owner.createConversation({ id: 'room' });
        await owner.addParticipant({ conversationId: 'room', userId: 'bob' });
        const bobStream = await open(protocol, onB, 'room', bob.user.key);
        const ownerStream = await open(protocol, onB, 'room', owner.user.key);
        await owner.removeParticipant({ conversationId: 'room', userId: 'bob' });
        await bobStream.waitForSignal('participant_removed', (s) => s.type === 'participant_removed');
        let timer: NodeJS.Timeout | undefined;
        const end = await Promise.race([
          bobStream.closed,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('bob’s listener on B was not ended')), 5000);
          }),
        ]);
        clearTimeout(timer);
        if (protocol === 'websocket') assert.equal(end.code, 1000, 'a normal close, from the server');
        assert.equal(bobStream.signals().at(-1)?.type, 'participant_removed', 'the last thing bob got');
        await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: 'still here' } });
        await ownerStream.waitUntil('the next message', (s) => texts(s.signals()).includes('still here'));
        assert.equal(ownerStream.ended, false);
      });
    }
  });
}
