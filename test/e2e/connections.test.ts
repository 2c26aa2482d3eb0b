// Connections are bounded, as a raw client meets them: headers and bodies that trickle in are cut (408
// with the documented body, and the connection closed) within the bounds set; one address's flood of
// connections past its limit is closed at once while another client is answered, and the server holds no
// more connections than its total; a slow but steady upload takes as long as it needs; event streams
// (SSE and WebSocket listeners, the webchat's stream) stay open past every timeout; an answer its client
// stopped reading is closed once idle. The connection layer does not depend on the store: SQLite only.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as chat from '@botpress/chat';
import { buildConfig } from '../../src/config.ts';
import { connectionBudget } from '../../src/descriptors.ts';
import { openListener } from '../helpers/listen.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { createChatBot, eventually, listenUrl, openSse } from '../helpers/sse.ts';
import type { ChatBot } from '../helpers/sse.ts';
import { testStores } from '../helpers/stores.ts';
import { parleyAdmin } from '../helpers/parley-client.ts';
import { webchatClientId } from '../helpers/webchat.ts';

const sqlite = (await testStores()).find((s) => s.name === 'sqlite')!;

const HEADERS_TIMEOUT_S = 2;
const BODY_TIMEOUT_S = 4;
const MIN_RATE = 1024;
const IDLE_TIMEOUT_S = 3;
/**
 * How long a cut may take to be seen here: the bound itself is a few seconds (the headers' timeout, or
 * the body's head start, and a look every second); the rest is room for a machine busy with other suites.
 */
const CUT_WITHIN_MS = 20_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RawClient {
  socket: net.Socket;
  /** Resolves when the server closed the connection: after how long, and what it had answered. */
  closed: Promise<{ afterMs: number; answer: string }>;
  readonly open: boolean;
}

/**
 * A raw connection that sends `head`, then one byte of `drip` every `everyMs` (none when 0): what an
 * attacker holding connections with slow requests does.
 */
function rawClient(
  origin: string,
  head: string,
  options: { everyMs?: number; localAddress?: string } = {},
): RawClient {
  const { hostname, port } = new URL(origin);
  const socket = net.connect({
    host: hostname,
    port: Number(port),
    ...(options.localAddress && { localAddress: options.localAddress }),
  });
  const started = performance.now();
  let answer = '';
  let open = true;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  // Writing to a connection the server cut, or a reset: both are how a cut looks from here.
  socket.on('error', () => {});
  socket.on('connect', () => {
    if (head !== '') socket.write(head);
  });
  const drip =
    options.everyMs &&
    setInterval(() => {
      if (socket.writable) socket.write('x');
    }, options.everyMs);
  const closed = new Promise<{ afterMs: number; answer: string }>((resolve) => {
    socket.on('close', () => {
      open = false;
      if (drip) clearInterval(drip);
      resolve({ afterMs: performance.now() - started, answer });
    });
  });
  return {
    socket,
    closed,
    get open() {
      return open;
    },
  };
}

/** The client's connection was closed within `ms`; what it was answered, if anything. */
async function cutWithin(client: RawClient, ms: number): Promise<{ afterMs: number; answer: string }> {
  const outcome = await Promise.race([client.closed, sleep(ms).then(() => undefined)]);
  client.socket.destroy();
  assert.ok(outcome, `the connection was still open after ${ms} ms`);
  return outcome;
}

/**
 * More bytes than the loopback's socket buffers can hold at their largest, the receiver's and the sender's
 * (Linux grows a receive buffer up to tcp_rmem's maximum, 32 MB on some kernels): twice that, so that an
 * answer this large stalls however far the buffers grew. 32 MB where the limits cannot be read.
 */
function stallingSize(): number {
  const largest = (name: string): number => {
    try {
      return Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]) || 0;
    } catch {
      return 0;
    }
  };
  return Math.max(32 * 1024 * 1024, 2 * (largest('tcp_rmem') + largest('tcp_wmem')));
}

/** A cut answered with 408 carries the error body; a cut may also be the connection closed, unanswered. */
function assertTimeoutAnswer(answer: string): void {
  if (answer === '') return;
  assert.match(answer, /^HTTP\/1\.1 408 /);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
  assert.deepEqual({ code: body.code, type: body.type }, { code: 408, type: 'OperationTimeout' });
  assert.match(String(body.id), /^err_/);
}

/** A request's head with a body of `length` bytes to come. */
const postHead = (path: string, length: number, start = '') =>
  `POST ${path} HTTP/1.1\r\nHost: parley\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n${start}`;

/** GET `path` on `origin` from `localAddress`, on a connection of its own; the status, or the error. */
function getFrom(origin: string, path: string, localAddress: string): Promise<number | string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const request = http.get(
      { host: hostname, port: Number(port), path, localAddress, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    request.setTimeout(10_000, () => request.destroy(new Error('no answer in 10 s')));
  });
}

describe('connections: timeouts (sqlite)', { skip: sqlite.skip }, () => {
  let t: TestServer;
  let bot: ChatBot;
  let webhookPath: string;
  before(async () => {
    t = await startTestServer(sqlite, {
      headersTimeoutSeconds: String(HEADERS_TIMEOUT_S),
      bodyTimeoutSeconds: String(BODY_TIMEOUT_S),
      bodyMinBytesPerSecond: String(MIN_RATE),
      idleTimeoutSeconds: String(IDLE_TIMEOUT_S),
      // Under the idle timeout: the pings keep the event streams moving.
      chatPingIntervalMs: '500',
    });
    bot = await createChatBot(t, 'conn-timeouts');
    const { webhook } = await parleyAdmin(t).getBotWebhook({ id: bot.botId });
    webhookPath = new URL(webhook.url).pathname;
  });
  after(() => t?.close());

  test('headers that trickle in are answered 408 and closed within the headers’ timeout', async () => {
    const client = rawClient(t.url, 'GET /healthz HTTP/1.1\r\nHost: parley\r\n', { everyMs: 0 });
    const { afterMs, answer } = await cutWithin(client, CUT_WITHIN_MS);
    assert.ok(afterMs >= HEADERS_TIMEOUT_S * 1000 - 100, `cut after ${afterMs} ms, not before the timeout`);
    assert.notEqual(answer, '', 'a 408 is written before the close');
    assertTimeoutAnswer(answer);
  });

  for (const [api, path] of [
    ['the webhook ingress', () => webhookPath],
    ['the Chat API (no key needed)', () => `/chat/${bot.webhookId}/users`],
  ] as const) {
    test(`a body sent a byte every 1.5 s to ${api} is cut within the bound`, async () => {
      const client = rawClient(t.url, postHead(path(), 200, '{"name":"'), { everyMs: 1500 });
      const { afterMs, answer } = await cutWithin(client, CUT_WITHIN_MS);
      // The head start is the headers' timeout; a few bytes earn next to nothing at 1 KiB/s.
      assert.ok(afterMs >= HEADERS_TIMEOUT_S * 1000 - 100, `cut after ${afterMs} ms, before the head start`);
      assertTimeoutAnswer(answer);
    });
  }

  test('a body above the minimum rate but longer than the body timeout is cut (not an upload)', async () => {
    const client = rawClient(t.url, postHead(`/chat/${bot.webhookId}/users`, 100_000, '{"name":"'));
    // 2 KiB/s: twice the minimum, for as long as it takes (100 kB would take 50 s).
    const drip = setInterval(() => client.socket.writable && client.socket.write('x'.repeat(512)), 250);
    try {
      const { afterMs, answer } = await cutWithin(client, CUT_WITHIN_MS);
      assert.ok(afterMs >= BODY_TIMEOUT_S * 1000 - 100, `cut after ${afterMs} ms, before the body timeout`);
      assertTimeoutAnswer(answer);
    } finally {
      clearInterval(drip);
    }
  });

  test('a slow but steady upload completes, past the body timeout and a pause longer than the idle timeout', async () => {
    const size = 40 * 1024;
    const { file } = await bot.client.upsertFile({ key: 'slow-upload.bin', size });
    const content = randomBytes(size);
    const started = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(file.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream', 'content-length': size },
        agent: false,
      });
      request.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      request.on('error', reject);
      void (async () => {
        // 10 KiB at once earn 10 s at the minimum rate: a pause of 4 s (past the idle timeout) is allowed.
        request.write(content.subarray(0, 10 * 1024));
        await sleep((IDLE_TIMEOUT_S + 1) * 1000);
        // Then 5 KiB/s, five times the minimum.
        for (let at = 10 * 1024; at < size; at += 1024) {
          request.write(content.subarray(at, at + 1024));
          await sleep(200);
        }
        request.end();
      })();
    });
    const tookMs = performance.now() - started;
    assert.equal(status, 200);
    assert.ok(tookMs > BODY_TIMEOUT_S * 1000, `the upload took ${tookMs} ms, longer than the body timeout`);
    const stored = await fetch((await bot.client.getFile({ id: file.id })).file.url);
    assert.deepEqual(Buffer.from(await stored.arrayBuffer()), content);
  });

  test('event streams stay open past every timeout: SSE and WebSocket listeners, the webchat’s stream', async () => {
    const user = await chat.Client.connect({ apiUrl: bot.webhookUrl, userId: 'patient' });
    await user.createConversation({ id: 'long-lived' });
    const url = listenUrl(bot.webhookUrl, 'long-lived');
    const sse = await openSse(url, { userKey: user.user.key });
    const socket = await openListener('websocket', url, { userKey: user.user.key, keyInQuery: true });
    const webchat = await openSse(`${t.url}/webchat/${await webchatClientId(t, bot.botId)}/initialize`);
    try {
      assert.equal(sse.status, 200);
      assert.equal(socket.status, 101);
      assert.equal(webchat.status, 200);
      // Longer than the headers', body and idle timeouts.
      await sleep((Math.max(HEADERS_TIMEOUT_S, BODY_TIMEOUT_S, IDLE_TIMEOUT_S) + 2) * 1000);
      assert.ok(!sse.ended && !socket.ended && !webchat.ended, 'every stream is still open');
      await user.createMessage({
        conversationId: 'long-lived',
        payload: { type: 'text', text: 'still there?' },
      });
      await sse.waitForSignal('the message over SSE', (s) => s.type === 'message_created');
      await socket.waitForSignal('the message over WebSocket', (s) => s.type === 'message_created');
      assert.ok(!webchat.ended, 'the webchat’s stream is still open');
    } finally {
      sse.destroy();
      socket.destroy();
      webchat.destroy();
    }
  });

  test('an answer its client stopped reading is closed once idle past the idle timeout', async () => {
    // Larger than what the sockets' buffers on both ends take in, so that the server's writes stall.
    const size = stallingSize();
    const { file } = await bot.client.upsertFile({ key: 'big.bin', size });
    const put = await fetch(file.uploadUrl, { method: 'PUT', body: randomBytes(size) });
    assert.equal(put.status, 200);
    const { url } = (await bot.client.getFile({ id: file.id })).file;
    const { pathname, search } = new URL(url);
    // The server's end of the connection, told from the others by the client's port.
    const accepted: net.Socket[] = [];
    const onConnection = (socket: net.Socket) => accepted.push(socket);
    t.server.app.server.on('connection', onConnection);
    const client = rawClient(t.url, `GET ${pathname}${search} HTTP/1.1\r\nHost: parley\r\n\r\n`);
    // Paused at its first chunk: a client polled later may have read the whole answer by then, and a
    // connection between requests is kept for Fastify's keep-alive time, not the idle timeout.
    const begun = new Promise<void>((resolve) =>
      client.socket.once('data', () => {
        client.socket.pause();
        resolve();
      }),
    );
    await begun;
    t.server.app.server.off('connection', onConnection);
    const serverEnd = accepted.find((socket) => socket.remotePort === client.socket.localPort);
    assert.ok(serverEnd, 'the server accepted the connection');
    // A paused client sees nothing of the close until it reads again: it reads once the server closed its
    // end. The idle time counts from when the answer stopped moving, once the sockets' buffers were full,
    // which on a busy machine can take longer than the idle timeout itself.
    const serverClosed = serverEnd.destroyed
      ? Promise.resolve(true)
      : new Promise<boolean>((resolve) => serverEnd.once('close', () => resolve(true)));
    assert.ok(
      await Promise.race([serverClosed, sleep(CUT_WITHIN_MS).then(() => false)]),
      `the server still held the connection ${CUT_WITHIN_MS} ms after its client stopped reading`,
    );
    client.socket.resume();
    await cutWithin(client, CUT_WITHIN_MS);
    assert.ok(
      client.socket.bytesRead < size,
      `the answer was cut: ${client.socket.bytesRead} of ${size} bytes`,
    );
  });
});

describe('connections: limits (sqlite)', { skip: sqlite.skip }, () => {
  const PER_ADDRESS = 20;
  const TOTAL = 40;
  let t: TestServer;
  const clients: RawClient[] = [];
  before(async () => {
    t = await startTestServer(sqlite, {
      maxConnectionsPerAddress: String(PER_ADDRESS),
      maxConnections: String(TOTAL),
      // Long enough that the connections held here are not closed for their silence during the test.
      headersTimeoutSeconds: '60',
    });
  });
  after(async () => {
    for (const client of clients) client.socket.destroy();
    await t?.close();
  });

  const flood = async (count: number, localAddress: string): Promise<RawClient[]> => {
    const opened = Array.from({ length: count }, () => rawClient(t.url, '', { localAddress }));
    clients.push(...opened);
    await Promise.all(
      opened.map(
        (c) =>
          new Promise<void>((resolve) =>
            c.socket.connecting ? c.socket.once('connect', resolve) : resolve(),
          ),
      ),
    );
    return opened;
  };

  test('a flood from one address past its limit is closed at once; another client is answered', async () => {
    const flooded = await flood(PER_ADDRESS + 30, '127.0.0.1');
    await eventually(
      'the connections past the limit to be closed',
      () => flooded.filter((c) => !c.open).length >= 30,
    );
    // The ones within the limit stay open (nothing closes them for a minute): the rest were closed as accepted.
    await sleep(500);
    assert.equal(flooded.filter((c) => c.open).length, PER_ADDRESS);
    assert.equal(
      await getFrom(t.url, '/healthz', '127.0.0.2'),
      200,
      'a client from another address is answered',
    );
    assert.notEqual(await getFrom(t.url, '/healthz', '127.0.0.1'), 200, 'the flooding address gets no more');
  });

  test('past the total, new connections are closed at once, whatever their address', async () => {
    // With the 20 held above: 20 more, from addresses of their own, fill the total.
    for (let i = 0; i < TOTAL - PER_ADDRESS; i++) await flood(1, `127.0.1.${i + 1}`);
    await sleep(500);
    assert.equal(clients.filter((c) => c.open).length, TOTAL);
    assert.notEqual(await getFrom(t.url, '/healthz', '127.0.2.1'), 200);
    for (const client of clients.splice(0)) client.socket.destroy();
    let status: number | string = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await getFrom(t.url, '/healthz', '127.0.2.1');
      if (status !== 200) await sleep(100);
    }
    assert.equal(status, 200, 'once they are gone, it answers again');
  });
});

describe('connections: what the descriptors allow', () => {
  const config = (settings: Record<string, string> = {}) =>
    buildConfig({ dataDir: '/tmp/unused', ...settings });

  test('auto: half of what is left once the store, the bot processes and the server have theirs', () => {
    const budget = connectionBudget(config(), 1024);
    assert.ok(budget.reserved > 64, `descriptors kept aside: ${budget.reserved}`);
    assert.equal(budget.maxConnections, Math.floor((1024 - budget.reserved) / 2));
    // 1,100 connections, the attack of the issue, are more than a process of 1,024 descriptors takes.
    assert.ok(budget.maxConnections < 1024 - budget.reserved);
  });

  test('a configured limit above what the descriptors allow is lowered (the log says so)', () => {
    const lowered = connectionBudget(config({ maxConnections: '5000' }), 1024);
    assert.deepEqual(lowered.lowered, { configured: 5000 });
    assert.equal(lowered.maxConnections, connectionBudget(config(), 1024).maxConnections);
    assert.equal(connectionBudget(config({ maxConnections: '100' }), 1024).maxConnections, 100);
  });

  test('settings: the idle timeout must outlast the event streams’ pings; trusted proxies are addresses', () => {
    assert.throws(
      () => config({ idleTimeoutSeconds: '3', chatPingIntervalMs: '4000' }),
      /PARLEY_IDLE_TIMEOUT_SECONDS/,
    );
    assert.throws(() => config({ trustProxy: 'on' }), /PARLEY_TRUST_PROXY/);
    assert.throws(() => config({ trustProxy: '10.0.0.0/33' }), /PARLEY_TRUST_PROXY/);
    assert.deepEqual(config({ trustProxy: '2' }).trustProxy, { kind: 'hops', hops: 2 });
    assert.deepEqual(config({ trustProxy: 'loopback, 10.1.2.3' }).trustProxy, {
      kind: 'subnets',
      subnets: [
        { network: '127.0.0.1', prefix: 8, family: 'ipv4' },
        { network: '::1', prefix: 128, family: 'ipv6' },
        { network: '10.1.2.3', prefix: 32, family: 'ipv4' },
      ],
    });
  });
});
