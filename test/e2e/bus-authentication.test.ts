// The live bus carries only what a process of the deployment signed: a client of Redis or PostgreSQL
// without the secret cannot find the channel by its name, and what it sends there (unsigned, tampered
// with, signed with another secret, replayed, stale, malformed) is dropped and counted, never shown to a
// Chat API listener, while the processes' own signals still flow. Redis is reached as the ACL user and
// password of REDIS_URL; a refused login stops the start with a message that does not show the password.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
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
import { BUS_REJECTIONS } from '../../src/bus/rejections.ts';
import type { BusRejection } from '../../src/bus/rejections.ts';
import { BusSeal } from '../../src/bus/signing.ts';
import { buildConfig } from '../../src/config.ts';
import type { SettingName } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import type { RunningServer } from '../../src/server.ts';
import { openListener } from '../helpers/listen.ts';
import type { Listener } from '../helpers/listen.ts';
import { runParley } from '../helpers/process.ts';
import { redisSkip, testRedisUrl } from '../helpers/redis.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { createChatBot, eventually, listenUrl } from '../helpers/sse.ts';
import { freshPostgresSchema, testDatabaseUrl, testStores } from '../helpers/stores.ts';

const stores = await testStores();
const postgres = stores.find((s) => s.name === 'postgres')!;
const sqlite = stores.find((s) => s.name === 'sqlite')!;
const noRedis = await redisSkip();

/** A plain client of the bus's transport, as anyone who can reach Redis or PostgreSQL has. */
interface Outsider {
  /** The channel of the deployment whose secret made `seal`. */
  channelOf(seal: BusSeal): string;
  /** The name one would try without the secret: the one fixed channel Parley used before. */
  guessedChannel: string;
  /** The most a message may carry (Postgres refuses a NOTIFY of 8000 bytes or more). */
  maxMessageBytes: number;
  publish(channel: string, text: string): Promise<void>;
  /** Collects what is sent on `channel`, from now on. */
  tap(channel: string): Promise<string[]>;
  close(): Promise<void>;
}

async function redisOutsider(): Promise<Outsider> {
  const publisher = new Redis(testRedisUrl);
  const subscriber = new Redis(testRedisUrl);
  const heard = new Map<string, string[]>();
  subscriber.on('message', (channel: string, text: string) => heard.get(channel)?.push(text));
  return {
    channelOf: redisChannel,
    guessedChannel: 'parley:signals',
    maxMessageBytes: 512 * 1024 * 1024,
    publish: async (channel, text) => void (await publisher.publish(channel, text)),
    tap: async (channel) => {
      const texts: string[] = [];
      heard.set(channel, texts);
      await subscriber.subscribe(channel);
      return texts;
    },
    close: async () => {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

async function postgresOutsider(): Promise<Outsider> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  const heard = new Map<string, string[]>();
  client.on('notification', (n) => {
    if (n.payload !== undefined) heard.get(n.channel)?.push(n.payload);
  });
  return {
    channelOf: postgresChannel,
    guessedChannel: 'parley_signals',
    maxMessageBytes: 7999,
    publish: async (channel, text) => void (await client.query('select pg_notify($1, $2)', [channel, text])),
    tap: async (channel) => {
      const texts: string[] = [];
      heard.set(channel, texts);
      await client.query(`listen ${channel}`);
      return texts;
    },
    close: () => client.end(),
  };
}

/** The value of `parley_bus_messages_rejected_total` for each reason, as `GET /metrics` gives it. */
async function rejections(url: string): Promise<Record<BusRejection, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = {} as Record<BusRejection, number>;
  for (const reason of BUS_REJECTIONS) {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`parley_bus_messages_rejected_total{reason="${reason}"} `));
    assert.ok(line, `the metrics list the ${reason} messages`);
    counts[reason] = Number(line.split(' ')[1]);
  }
  return counts;
}

const NONE: Record<BusRejection, number> = { unsigned: 0, forged: 0, malformed: 0, stale: 0, replayed: 0 };

type Received = { type: string; data: Record<string, unknown> };
const texts = (signals: Received[]) =>
  signals.filter((s) => s.type === 'message_created').map((s) => (s.data.payload as { text: string }).text);

/** A signal as the bus carries it, and a batch of them as the processes send it (before signing). */
interface WireSignal {
  conversationId: string;
  seq: number;
  frame: string;
}
const batchBody = (signals: WireSignal[], sentAt = Date.now()) =>
  JSON.stringify({ origin: randomUUID(), number: 0, sentAt, signals });

for (const transport of ['redis', 'postgres'] as const) {
  const skip = postgres.skip ?? (transport === 'redis' ? noRedis : undefined);
  const name = transport === 'redis' ? 'Redis' : 'PostgreSQL LISTEN/NOTIFY';
  describe(`the live bus over ${name} takes only what the deployment signed`, { skip }, () => {
    const token = `bp_pat_test_${randomBytes(24).toString('base64url')}`;
    let schema: Awaited<ReturnType<typeof freshPostgresSchema>>;
    const dirs: string[] = [];
    const servers: RunningServer[] = [];
    let outsider: Outsider;

    /** A server process of the deployment: every one shares the store, and so the stored bus secret. */
    async function serve(): Promise<RunningServer> {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-bus-'));
      dirs.push(dataDir);
      const settings: Partial<Record<SettingName, string>> = {
        port: '0',
        host: '127.0.0.1',
        dataDir,
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        adminToken: token,
        databaseUrl: schema.url,
        ...(transport === 'redis' && { redisUrl: testRedisUrl }),
      };
      const server = await startServer(buildConfig(settings));
      servers.push(server);
      return server;
    }

    before(async () => {
      schema = await freshPostgresSchema();
      outsider = transport === 'redis' ? await redisOutsider() : await postgresOutsider();
    });

    after(async () => {
      for (const server of servers) await server.close();
      await outsider?.close();
      await schema?.drop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    });

    test('forged messages, on a guessed channel or on the real one, never reach a listener; the processes’ own still do', async () => {
      const a = await serve();
      const b = await serve();
      assert.ok(a.firstStart.created, 'the first process set the store up');
      const workspaceId = a.firstStart.workspaceId;
      const admin = new Client({ apiUrl: a.url, token, workspaceId });
      const { bot } = await admin.createBot({ name: 'bus-target' });
      const entry = (await admin.getBot({ id: bot.id })).bot.integrations.chat;
      assert.ok(entry, 'the bot has its chat channel');
      const onA = `${a.url}/chat/${entry.webhookId}`;
      const onB = `${b.url}/chat/${entry.webhookId}`;

      const owner = await chat.Client.connect({ apiUrl: onA, userId: 'owner' });
      await owner.createConversation({ id: 'room' });
      // Listeners on B: what A records reaches them only over the bus.
      const sse: Listener = await openListener('sse', listenUrl(onB, 'room'), { userKey: owner.user.key });
      assert.equal(sse.opened, true);
      const clientOnB = await chat.Client.connect({ apiUrl: onB, userKey: owner.user.key });
      const official = await clientOnB.listenConversation({ id: 'room' });
      const seen: Received[] = [];
      official.on('message_created', (data) => seen.push({ type: 'message_created', data }));

      // What one would see with the secret: the channel, and a genuine message of A on it.
      const secret = await a.domain.settings.get(STORED_BUS_SECRET);
      assert.ok(secret, 'the processes keep a bus secret in the store');
      const seal = new BusSeal(secret);
      const channel = outsider.channelOf(seal);
      const onChannel = await outsider.tap(channel);
      await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: 'before' } });
      await sse.waitUntil('the first message on B', (l) => texts(l.signals()).includes('before'));
      await eventually('the first message through the official client on B', () =>
        texts(seen).includes('before'),
      );
      await eventually('A’s message on the channel', () => onChannel.length > 0);
      const genuine = onChannel[0]!;
      const opened = seal.open(genuine);
      assert.ok('body' in opened, 'A’s message is signed with the stored secret');
      const [signal] = (JSON.parse(opened.body) as { signals: WireSignal[] }).signals;
      assert.ok(signal, 'A’s message carries the signal');
      assert.deepEqual(await rejections(b.url), NONE, 'B dropped none of A’s messages');

      // The bot's next message, as a tenant on the transport would write it, numbered next.
      const real = JSON.parse(signal.frame) as { type: string; data: Record<string, unknown> };
      const forgedSignal = (n: number): WireSignal => ({
        conversationId: signal.conversationId,
        seq: signal.seq + 1,
        frame: JSON.stringify({
          ...real,
          data: {
            ...real.data,
            id: `forged-${n}`,
            isBot: true,
            payload: { type: 'text', text: `FORGED ${n}` },
          },
        }),
      });
      const unsigned = JSON.stringify([forgedSignal(0)]); // the format Parley sent before it signed
      for (const guessed of [
        outsider.guessedChannel,
        `${outsider.guessedChannel}_${randomBytes(16).toString('hex')}`,
      ])
        await outsider.publish(guessed, unsigned);
      const macOfGenuine = genuine.slice(0, genuine.indexOf('.', 3) + 1);
      const other = new BusSeal(randomBytes(32).toString('base64url'));
      const forgeries: [BusRejection, string][] = [
        ['unsigned', unsigned],
        ['forged', macOfGenuine + batchBody([forgedSignal(1)])],
        ['forged', other.seal(batchBody([forgedSignal(2)]))],
        ['replayed', genuine],
        // As if signed by a process two minutes ago, and kept until now.
        ['stale', seal.seal(batchBody([forgedSignal(3)], Date.now() - 120_000))],
        ['malformed', seal.seal('{"signals":"not a batch"}')],
        ['malformed', seal.seal(batchBody([{ ...forgedSignal(4), seq: -1 }]))],
      ];
      if (outsider.maxMessageBytes > 600 * 1024)
        forgeries.push(['malformed', `v1.${'x'.repeat(600 * 1024)}`]);
      for (const [, text] of forgeries) await outsider.publish(channel, text);

      const expected = { ...NONE };
      for (const [reason] of forgeries) expected[reason]++;
      let counted = NONE;
      // Generous: the messages are on their way within milliseconds; 10 s is a machine that stalls.
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        counted = await rejections(b.url);
        if (JSON.stringify(counted) === JSON.stringify(expected)) break;
        await new Promise((r) => setTimeout(r, 50));
      }

      await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: 'after' } });
      await sse.waitUntil('the second message on B', (l) => texts(l.signals()).includes('after'));
      await eventually('the second message through the official client on B', () =>
        texts(seen).includes('after'),
      );
      assert.deepEqual(
        texts(sse.signals()),
        ['before', 'after'],
        'the SSE listener shows only what was sent',
      );
      assert.deepEqual(texts(seen), ['before', 'after'], 'the official client shows only what was sent');
      assert.ok(
        sse.signals().every((s) => s.type !== 'signals_missed'),
        'no forged number made the listener skip a signal',
      );
      assert.equal(sse.signals().at(-1)!.seq, signal.seq + 1, 'the message after is numbered right after');
      assert.ok(
        sse.raw().every((raw) => !raw.includes('FORGED')),
        'nothing forged in what the listener received',
      );
      assert.deepEqual(counted, expected, 'B counted each message on its channel as dropped, by reason');
      await official.disconnect();
      sse.destroy();
    });
  });
}

describe('Redis as an ACL user with a password', { skip: noRedis ?? sqlite.skip }, () => {
  const user = `parley_test_${randomBytes(6).toString('hex')}`;
  // Characters a URL must escape, as a generated password may hold.
  const password = `p@ss:${randomBytes(12).toString('hex')}/?#`;
  const urlFor = (pass: string) =>
    `redis://${user}:${encodeURIComponent(pass)}@${new URL(testRedisUrl).host}`;
  let admin: Redis;
  let t: TestServer | undefined;

  before(async () => {
    admin = new Redis(testRedisUrl);
    // The rights docs/security.md recommends: Parley's channels and rate-limit keys, and the commands
    // it sends, nothing else.
    await admin.call(
      'ACL',
      'SETUSER',
      user,
      'on',
      `>${password}`,
      'resetchannels',
      '&parley:signals:*',
      'resetkeys',
      '~parley-rate-*',
      '-@all',
      '+@connection',
      '+info',
      '+publish',
      '+subscribe',
      '+unsubscribe',
      '+eval',
      '+evalsha',
      '+script|load',
      '+get',
      '+incr',
      '+pexpire',
      '+pttl',
    );
  });

  after(async () => {
    await t?.close();
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  test('the user and password of REDIS_URL are what Parley connects with, and they are enough', async () => {
    t = await startTestServer(sqlite, { redisUrl: urlFor(password) });
    const clients = String(await admin.call('CLIENT', 'LIST'));
    assert.ok(
      clients.split('\n').filter((line) => line.includes(` user=${user} `)).length >= 2,
      'the bus’s connections are logged in as the ACL user',
    );
    const secret = await t.server.domain.settings.get(STORED_BUS_SECRET);
    assert.ok(secret);
    const tap = new Redis(testRedisUrl);
    const heard: string[] = [];
    tap.on('message', (_channel: string, text: string) => heard.push(text));
    await tap.subscribe(redisChannel(new BusSeal(secret)));
    try {
      const bot = await createChatBot(t, 'acl-bot');
      const owner = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'owner' });
      await owner.createConversation({ id: 'room' });
      const sse = await openListener('sse', listenUrl(bot.webhookUrl, 'room'), { userKey: owner.user.key });
      await owner.createMessage({ conversationId: 'room', payload: { type: 'text', text: 'through ACL' } });
      await sse.waitUntil('the message', (l) => texts(l.signals()).includes('through ACL'));
      await eventually('the signed message on Redis, published as the ACL user', () => heard.length > 0);
      sse.destroy();
    } finally {
      tap.disconnect();
    }
    const denied = (await admin.call('ACL', 'LOG')) as unknown[][];
    const mine = denied.filter((entry) =>
      entry.some((field, i) => entry[i - 1] === 'username' && field === user),
    );
    assert.deepEqual(mine, [], 'Redis denied the ACL user nothing: the recommended rights are enough');
  });

  test('a wrong password stops the start with what Redis answered, and the password shows nowhere', async () => {
    const wrong = `wrong-${randomBytes(8).toString('hex')}`;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-bus-'));
    try {
      const proc = runParley(['serve', '--port', '0', '--data-dir', dataDir], { REDIS_URL: urlFor(wrong) });
      assert.equal(await proc.exited, 1);
      const output = proc.output();
      assert.match(output, /Redis at redis:\/\/parley_test_\w+:\*\*\*@[^ ]+ refused Parley: WRONGPASS/);
      assert.doesNotMatch(output, /Connection is closed/, 'the reason, not the symptom');
      assert.ok(!output.includes(wrong) && !output.includes(encodeURIComponent(wrong)), 'no password');
      assert.ok(!output.includes(encodeURIComponent(password)), 'nor the right one');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

test('PARLEY_BUS_SECRET must be long enough to be a secret', () => {
  assert.throws(
    () => buildConfig({ busSecret: 'short' }),
    /PARLEY_BUS_SECRET must be at least 32 characters/,
  );
  assert.equal(buildConfig({ busSecret: 'x'.repeat(32) }).busSecret, 'x'.repeat(32));
});
