// The load process: started by bench/run.ts (pinned to its own core when it can), it takes jobs over IPC,
// runs them with closed-loop clients on keep-alive connections, and answers with summaries. It logs
// nothing per request.
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type WebSocket from 'ws';
import { loadParleyWebSocket, loadWebSocket } from './lib/bench-modules.ts';
import type { WebSocketLike } from './lib/bench-modules.ts';
import { HEADERS } from '../src/contract/headers.ts';
import { chatUserAndConversation, listenPath, messagesPath } from './lib/chat-api.ts';
import { HttpConnection } from './lib/http-client.ts';
import { serveJobs } from './lib/job-process.ts';
import type {
  ChatJob,
  FanoutDeliverJob,
  FanoutDeliverResult,
  FanoutOpenJob,
  FanoutOpenResult,
  HeldOpenJob,
  HeldRunJob,
  HeldRunResult,
  HttpJob,
  Job,
  JobResult,
  ListenProtocol,
  RunBounds,
  RunResult,
} from './lib/protocol.ts';
import { summarize } from './lib/stats.ts';
import type { Latency } from './lib/stats.ts';

const REPLY_TIMEOUT_MS = 10_000;
const TEXT = 'The quick brown fox jumps over the lazy dog by the riverbank at dawn';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let runCounter = 0;

// ---------------------------------------------------------------------------------------------------
// The closed loop: `clients` virtual clients, each doing one operation after the other.

async function closedLoop(
  bounds: RunBounds,
  clients: number,
  once: (client: number, seq: number) => Promise<void>,
): Promise<RunResult> {
  const start = performance.now();
  const warmEnd = start + bounds.warmupMs;
  let end = warmEnd + bounds.durationMs;
  const latencies: number[] = [];
  let completedInWindow = 0;
  let errors = 0;
  let firstError: string | undefined;
  let stop = false;

  const loop = async (client: number) => {
    let seq = 0;
    while (!stop) {
      const t0 = performance.now();
      if (t0 >= end) break;
      try {
        await once(client, seq++);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
        if (errors > 20) stop = true;
        await sleep(5);
        continue;
      }
      const t1 = performance.now();
      if (t1 >= warmEnd && t1 <= end) completedInWindow++;
      if (t0 >= warmEnd && t1 <= end) {
        latencies.push(t1 - t0);
        if (latencies.length >= bounds.maxMeasured && !stop) {
          stop = true;
          end = t1;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => loop(c)));
  const windowMs = Math.max(1, end - warmEnd);
  return {
    measured: latencies.length,
    errors,
    ...(firstError !== undefined && { firstError }),
    windowMs,
    rate: (completedInWindow / windowMs) * 1000,
    latency: summarize(latencies),
  };
}

/** Waiters for the reply to a marked message: the marker is the text the client sent. */
class Replies {
  private readonly waiting = new Map<string, () => void>();
  wait(marker: string, timeoutMs = REPLY_TIMEOUT_MS): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.waiting.delete(marker);
          reject(new Error(`no reply to "${marker}" in ${Math.round(timeoutMs)} ms`));
        },
        Math.max(0, timeoutMs),
      );
      this.waiting.set(marker, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  /** Called with the text of each bot message: `You said: <marker>` (the echo bot's), `echo: <marker>` (a model's). */
  received(text: string): void {
    const marker = text.replace(/^(You said|echo): /, '');
    const done = this.waiting.get(marker);
    if (done) {
      this.waiting.delete(marker);
      done();
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Chat round trip against Parley: the Chat API over raw HTTP, replies on one listener per conversation,
// an SSE stream or a WebSocket.

interface ListenHandle {
  close(): void;
}

const BOT_MARK = '"isBot":true';

/** The text of a signal's JSON (SSE `data:`, WebSocket message) when it is a bot's text message. */
function botText(json: string): string | undefined {
  const signal = JSON.parse(json) as { type: string; data: { payload?: { text?: unknown } } };
  const text = signal.data.payload?.text;
  return signal.type === 'message_created' && typeof text === 'string' ? text : undefined;
}

/** A raw SSE reader (node:http, its own socket) that hands the text of each bot message to `onBotText`. */
function openChatStream(
  url: string,
  userKey: string,
  onBotText: (text: string) => void,
): Promise<ListenHandle> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, {
      agent: false,
      headers: { accept: 'text/event-stream', 'cache-control': 'no-cache', 'x-user-key': userKey },
    });
    const timer = setTimeout(() => request.destroy(new Error(`opening ${url} timed out`)), 10_000);
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.on('response', (response) => {
      clearTimeout(timer);
      if (response.statusCode !== 200) {
        reject(new Error(`listen answered ${response.statusCode}`));
        response.resume();
        return;
      }
      request.removeAllListeners('error');
      request.on('error', () => {});
      response.on('error', () => {});
      response.setEncoding('utf8');
      let pending = '';
      response.on('data', (chunk: string) => {
        pending += chunk;
        let cut: number;
        while ((cut = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, cut);
          pending = pending.slice(cut + 2);
          const dataAt = block.indexOf('data: ');
          if (dataAt < 0) continue;
          const data = block.slice(dataAt + 6);
          if (!data.includes(BOT_MARK)) continue;
          const text = botText(data);
          if (text !== undefined) onBotText(text);
        }
      });
      resolve({ close: () => request.destroy() });
    });
  });
}

/** Opens a conversation's listener that hands the text of each bot message to `onBotText`. */
type ChatListener = typeof openChatStream;

const ParleyWebSocket = loadParleyWebSocket();

/**
 * A listening WebSocket (`ws`, no compression, no UTF-8 check): the key in the `x-user-key` query
 * parameter, as the official client sends it. Each message is handed to `onMessage` as received (a
 * Buffer: a signal's JSON, or `ping`). Rejects with the status when the upgrade is refused.
 */
async function openListenSocket(
  url: string,
  userKey: string,
  onMessage: (data: Buffer) => void,
): Promise<WebSocket> {
  const ws = new ParleyWebSocket(`${url.replace(/^http/, 'ws')}?x-user-key=${encodeURIComponent(userKey)}`, {
    perMessageDeflate: false,
    skipUTF8Validation: true,
    handshakeTimeout: 20_000,
  });
  ws.on('message', onMessage as (data: WebSocket.RawData) => void);
  // Rejects on an 'error' first (`Unexpected server response: 401`, a timeout).
  await once(ws, 'open');
  // Later, an error ends the socket ('close' follows): a missing reply says so.
  ws.on('error', () => {});
  return ws;
}

/** A WebSocket reader: only messages with the bot mark are decoded and parsed. */
const openChatSocket: ChatListener = async (url, userKey, onBotText) => {
  const mark = Buffer.from(BOT_MARK);
  const ws = await openListenSocket(url, userKey, (data) => {
    if (data.indexOf(mark) < 0) return;
    const text = botText(data.toString());
    if (text !== undefined) onBotText(text);
  });
  return { close: () => ws.terminate() };
};

const chatListeners: Record<ListenProtocol, ChatListener> = {
  sse: openChatStream,
  websocket: openChatSocket,
};

async function chatParley(job: ChatJob): Promise<RunResult> {
  const base = new URL(job.url);
  const setup = HttpConnection.of(job.url);
  const run = ++runCounter;
  const openListener = chatListeners[job.listen ?? 'sse'];
  const clients: {
    key: string;
    conversationId: string;
    conn: HttpConnection;
    replies: Replies;
    listener: ListenHandle;
  }[] = [];
  try {
    for (let c = 0; c < job.conversations; c++) {
      const { userKey: key, conversationId } = await chatUserAndConversation(
        job.url,
        `bench ${run}.${c}`,
        setup,
      );
      const replies = new Replies();
      const listener = await openListener(listenPath(job.url, conversationId), key, (t) =>
        replies.received(t),
      );
      clients.push({ key, conversationId, conn: HttpConnection.of(job.url), replies, listener });
    }
    const path = messagesPath(base.pathname);
    return await closedLoop(job, job.conversations, async (c, seq) => {
      const client = clients[c] as (typeof clients)[number];
      const marker = `m${run}.${c}.${seq}`;
      const replied = client.replies.wait(marker);
      replied.catch(() => {});
      const sent = await client.conn.request(
        'POST',
        path,
        `x-user-key: ${client.key}\r\n`,
        JSON.stringify({ conversationId: client.conversationId, payload: { type: 'text', text: marker } }),
      );
      if (sent.status !== 201)
        throw new Error(`createMessage answered ${sent.status}: ${sent.body.toString()}`);
      await replied;
    });
  } finally {
    setup.close();
    for (const c of clients) {
      c.conn.close();
      c.listener.close();
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Botkit 4 with its web adapter: one websocket per end user, the adapter's JSON messages.

async function chatBotkit(job: ChatJob): Promise<RunResult> {
  const WebSocket = loadWebSocket();
  const run = ++runCounter;
  const sockets: { ws: WebSocketLike; user: string; replies: Replies }[] = [];
  try {
    for (let c = 0; c < job.conversations; c++) {
      const ws = new WebSocket(job.url, { perMessageDeflate: false });
      const replies = new Replies();
      await new Promise<void>((resolve, reject) => {
        ws.on('open', resolve);
        ws.on('error', reject);
      });
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type?: string; text?: unknown };
        if (typeof message.text === 'string') replies.received(message.text);
      });
      sockets.push({ ws, user: `user-${run}-${c}`, replies });
    }
    return await closedLoop(job, job.conversations, async (c, seq) => {
      const s = sockets[c] as (typeof sockets)[number];
      const marker = `m${run}.${c}.${seq}`;
      const replied = s.replies.wait(marker);
      s.ws.send(JSON.stringify({ type: 'message', text: marker, user: s.user, channel: 'websocket' }));
      await replied;
    });
  } finally {
    for (const s of sockets) s.ws.terminate();
  }
}

// ---------------------------------------------------------------------------------------------------
// Bot Framework behind offline-directline: Direct Line REST, the client polls the activities for the reply.

async function chatDirectLine(job: ChatJob): Promise<RunResult> {
  const run = ++runCounter;
  const setup = HttpConnection.of(job.url);
  const clients: { conn: HttpConnection; conversationId: string; user: string; watermark: number }[] = [];
  const pollMs = job.pollMs ?? 5;
  try {
    for (let c = 0; c < job.conversations; c++) {
      const created = await setup.json('POST', '/directline/conversations', '', {});
      if (created.status !== 200 && created.status !== 201)
        throw new Error(`create conversation answered ${created.status}`);
      const conversationId = (created.json as { conversationId: string }).conversationId;
      clients.push({
        conn: HttpConnection.of(job.url),
        conversationId,
        user: `user-${run}-${c}`,
        watermark: 0,
      });
    }
    return await closedLoop(job, job.conversations, async (c, seq) => {
      const client = clients[c] as (typeof clients)[number];
      const marker = `m${run}.${c}.${seq}`;
      const path = `/directline/conversations/${client.conversationId}/activities`;
      const sent = await client.conn.request(
        'POST',
        path,
        '',
        JSON.stringify({ type: 'message', from: { id: client.user, name: client.user }, text: marker }),
      );
      if (sent.status !== 200) throw new Error(`send activity answered ${sent.status}`);
      const deadline = performance.now() + REPLY_TIMEOUT_MS;
      const expected = `You said: ${marker}`;
      for (;;) {
        const polled = await client.conn.json('GET', `${path}?watermark=${client.watermark}`, '');
        const page = polled.json as { activities: { text?: string }[]; watermark: number };
        client.watermark = page.watermark;
        if (page.activities.some((a) => a.text === expected)) return;
        if (performance.now() > deadline) throw new Error(`no reply to "${marker}"`);
        await sleep(pollMs);
      }
    });
  } finally {
    setup.close();
    for (const c of clients) c.conn.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// The action call and its node:http ceiling: POST { type, input: { text } }.

async function httpRun(job: HttpJob): Promise<RunResult> {
  const u = new URL(job.url);
  const headers = Object.entries(job.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const conns = Array.from({ length: job.concurrency }, () => HttpConnection.of(job.url));
  const fixed = JSON.stringify({ type: job.actionType, input: { text: TEXT } });
  const run = ++runCounter;
  let counter = 0;
  try {
    return await closedLoop(job, job.concurrency, async (c, seq) => {
      if (job.gets) {
        const path = job.gets[(c * 7919 + seq) % job.gets.length] as string;
        const answer = await (conns[c] as HttpConnection).request('GET', path, headers);
        if (answer.status !== job.expectStatus) {
          throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
        }
        return;
      }
      const body =
        job.input === 'fixed'
          ? fixed
          : JSON.stringify({ type: job.actionType, input: { text: `${TEXT} r${run}n${counter++}` } });
      const answer = await (conns[c] as HttpConnection).request('POST', u.pathname, headers, body);
      if (answer.status !== job.expectStatus) {
        throw new Error(`answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
      }
    });
  } finally {
    for (const c of conns) c.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Live fan-out: idle listeners, SSE on raw sockets (an HTTP/1.1 GET, then only a byte search per chunk) or
// WebSockets (a byte search per message).

interface Listener {
  close(): void;
  /** Arrival of the current delivery's message and of the bot's reply to it (0: not yet). */
  messageAt: number;
  replyAt: number;
  tail: Buffer | undefined;
}

const listeners: Listener[] = [];
let currentMessage: Buffer | undefined;
let currentReply: Buffer | undefined;
let gotMessage = 0;
let gotReply = 0;
let onProgress: (() => void) | undefined;

/**
 * Looks for the current delivery's message and reply in what a listener received: an SSE chunk (the
 * tail of the one before is kept, a marker may straddle two) or a whole WebSocket message (no tail).
 */
function scan(l: Listener, chunk: Buffer, keepTail: boolean): void {
  if (!currentMessage || !currentReply || (l.messageAt && l.replyAt)) return;
  const now = performance.now();
  const data = l.tail ? Buffer.concat([l.tail, chunk]) : chunk;
  if (!l.messageAt && data.indexOf(currentMessage) >= 0) {
    l.messageAt = now;
    gotMessage++;
  }
  if (!l.replyAt && data.indexOf(currentReply) >= 0) {
    l.replyAt = now;
    gotReply++;
  }
  if (keepTail) l.tail = data.length > 96 ? data.subarray(data.length - 96) : data;
  onProgress?.();
}

function openSseListener(u: URL, path: string, userKey: string): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port), noDelay: true });
    const listener: Listener = { close: () => socket.destroy(), messageAt: 0, replyAt: 0, tail: undefined };
    let opened = false;
    const timer = setTimeout(() => socket.destroy(new Error('opening a listener timed out')), 20_000);
    socket.on('connect', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nhost: ${u.host}\r\naccept: text/event-stream\r\ncache-control: no-cache\r\n` +
          `x-user-key: ${userKey}\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      if (!opened) {
        opened = true;
        clearTimeout(timer);
        if (chunk.toString('latin1', 0, 12) !== 'HTTP/1.1 200') {
          socket.destroy();
          reject(new Error(`listen answered ${chunk.toString('latin1', 0, 200)}`));
          return;
        }
        resolve(listener);
        return;
      }
      scan(listener, chunk, true);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (!opened) reject(err);
    });
    // A server past its connections closes new ones without a word: no error, and no answer to wait for.
    socket.on('close', () => {
      clearTimeout(timer);
      if (!opened) reject(new Error('the server closed the connection without answering'));
    });
  });
}

async function openWebSocketListener(u: URL, path: string, userKey: string): Promise<Listener> {
  const listener: Listener = { close: () => {}, messageAt: 0, replyAt: 0, tail: undefined };
  const ws = await openListenSocket(`${u.origin}${path}`, userKey, (data) => scan(listener, data, false));
  listener.close = () => ws.terminate();
  return listener;
}

const fanoutListeners: Record<ListenProtocol, typeof openSseListener> = {
  sse: openSseListener,
  websocket: openWebSocketListener,
};

/**
 * Opens `count` things (listeners, conversations) with 64 workers at once, each pushed to `into` when
 * open; gives up after 100 failures. `open` gets the worker's number (for a connection of its own).
 */
async function openMany<T>(
  count: number,
  into: T[],
  open: (worker: number) => Promise<T>,
): Promise<FanoutOpenResult> {
  const started = performance.now();
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const worker = async (w: number) => {
    while (next < count) {
      next++;
      try {
        into.push(await open(w));
      } catch (err) {
        failed++;
        firstError ??= (err as Error).message;
        if (failed > 100) return;
      }
    }
  };
  await Promise.all(Array.from({ length: 64 }, (_, w) => worker(w)));
  return {
    open: into.length,
    failed,
    ...(firstError !== undefined && { firstError }),
    openMs: performance.now() - started,
  };
}

function fanoutOpen(job: FanoutOpenJob): Promise<FanoutOpenResult> {
  const u = new URL(job.chatUrl);
  const path = listenPath(u.pathname, job.conversationId);
  const openListener = fanoutListeners[job.protocol];
  return openMany(job.total - listeners.length, listeners, () => openListener(u, path, job.userKey));
}

async function fanoutDeliver(job: FanoutDeliverJob): Promise<FanoutDeliverResult> {
  const u = new URL(job.chatUrl);
  const conn = HttpConnection.of(job.chatUrl);
  const messageTimes: number[] = [];
  const replyTimes: number[] = [];
  const lastMs: number[] = [];
  const warmupLastMs: number[] = [];
  const perDelivery: { message: Latency; reply: Latency }[] = [];
  let missing = 0;
  const run = ++runCounter;
  try {
    for (let d = 0; d < job.warmupDeliveries + job.deliveries; d++) {
      const counted = d >= job.warmupDeliveries;
      const marker = `fan${run}x${d}x${Math.random().toString(36).slice(2, 8)}`;
      for (const l of listeners) {
        l.messageAt = 0;
        l.replyAt = 0;
        l.tail = undefined;
      }
      gotMessage = 0;
      gotReply = 0;
      currentMessage = Buffer.from(`"text":"${marker}"`);
      currentReply = Buffer.from(`"text":"You said: ${marker}"`);
      const all = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          onProgress = undefined;
          resolve();
        }, job.timeoutMs);
        onProgress = () => {
          if (gotMessage >= listeners.length && gotReply >= listeners.length) {
            clearTimeout(timer);
            onProgress = undefined;
            resolve();
          }
        };
      });
      const sentAt = performance.now();
      const sent = await conn.request(
        'POST',
        messagesPath(u.pathname),
        `${HEADERS.userKey}: ${job.userKey}\r\n`,
        JSON.stringify({ conversationId: job.conversationId, payload: { type: 'text', text: marker } }),
      );
      if (sent.status !== 201)
        throw new Error(`createMessage answered ${sent.status}: ${sent.body.toString()}`);
      await all;
      let last = 0;
      const message: number[] = [];
      const reply: number[] = [];
      for (const l of listeners) {
        if (l.messageAt) last = Math.max(last, l.messageAt - sentAt);
        if (!counted) continue;
        if (l.messageAt) message.push(l.messageAt - sentAt);
        else missing++;
        if (l.replyAt) reply.push(l.replyAt - sentAt);
        else missing++;
      }
      (counted ? lastMs : warmupLastMs).push(last);
      if (counted) {
        messageTimes.push(...message);
        replyTimes.push(...reply);
        perDelivery.push({ message: summarize(message), reply: summarize(reply) });
      }
      currentMessage = undefined;
      currentReply = undefined;
      await sleep(job.pauseMs);
    }
  } finally {
    conn.close();
  }
  return {
    listeners: listeners.length,
    deliveries: job.deliveries,
    message: summarize(messageTimes),
    reply: summarize(replyTimes),
    perDelivery,
    lastMs,
    warmupLastMs,
    missing,
  };
}

async function fanoutClose(): Promise<Record<string, never>> {
  for (const l of listeners.splice(0)) l.close();
  await sleep(200);
  return {};
}

// ---------------------------------------------------------------------------------------------------
// Held load: many end users, each with a conversation and its SSE listener open (the chat round trip's
// listener), sending on a fixed schedule (open loop) whatever the replies do.

const held: { userKey: string; conversationId: string; listener: ListenHandle }[] = [];
/** The replies of all held conversations: the markers are unique across them. */
const heldReplies = new Replies();

async function heldOpen(job: HeldOpenJob): Promise<FanoutOpenResult> {
  const run = ++runCounter;
  const setups = new Map<number, HttpConnection>();
  let n = 0;
  try {
    return await openMany(job.conversations - held.length, held, async (w) => {
      let setup = setups.get(w);
      if (!setup) setups.set(w, (setup = HttpConnection.of(job.chatUrl)));
      const user = await chatUserAndConversation(job.chatUrl, `held ${run}.${n++}`, setup);
      const listener = await openChatStream(
        listenPath(job.chatUrl, user.conversationId),
        user.userKey,
        (text) => heldReplies.received(text),
      );
      return { ...user, listener };
    });
  } finally {
    for (const c of setups.values()) c.close();
  }
}

async function heldRun(job: HeldRunJob): Promise<HeldRunResult> {
  const path = messagesPath(new URL(job.chatUrl).pathname);
  const run = ++runCounter;
  // The sends' connections: a free one, else a new one up to maxConnections, else wait for one.
  const free: HttpConnection[] = [];
  const all: HttpConnection[] = [];
  const queue: ((c: HttpConnection) => void)[] = [];
  const take = (): Promise<HttpConnection> | HttpConnection => {
    const c = free.pop();
    if (c) return c;
    if (all.length < job.maxConnections) {
      const fresh = HttpConnection.of(job.chatUrl);
      all.push(fresh);
      return fresh;
    }
    return new Promise((resolve) => queue.push(resolve));
  };
  const give = (c: HttpConnection) => {
    const next = queue.shift();
    if (next) next(c);
    else free.push(c);
  };

  const start = performance.now() + 20;
  const warmEnd = start + job.warmupMs;
  const end = warmEnd + job.durationMs;
  const deadline = end + job.graceMs;
  const latencies: number[] = [];
  const answerLatencies: number[] = [];
  const counted: Promise<void>[] = [];
  /** What became of each measured send. */
  const outcomes: { sent: boolean; answered: boolean; acknowledged: boolean; replied: boolean }[] = [];
  let connectionWaits = 0;
  let repliesInWindow = 0;
  let sendErrors = 0;
  let refused = 0;
  let firstError: string | undefined;
  let ended = false;

  const send = async (c: number, seq: number, at: number) => {
    const conv = held[c] as (typeof held)[number];
    const marker = `h${run}.${c}.${seq}`;
    const measured = at >= warmEnd;
    const outcome = { sent: false, answered: false, acknowledged: false, replied: false };
    if (measured) outcomes.push(outcome);
    const replied = heldReplies.wait(marker, deadline - performance.now()).then(
      () => {
        const now = performance.now();
        if (now >= warmEnd && now <= end) repliesInWindow++;
        if (measured) latencies.push(now - at);
        outcome.replied = true;
      },
      () => {},
    );
    if (measured) counted.push(replied);
    const taken = take();
    if (measured && taken instanceof Promise) connectionWaits++;
    const conn = await taken;
    if (ended) return;
    outcome.sent = true;
    try {
      const sent = await conn.request(
        'POST',
        path,
        `x-user-key: ${conv.userKey}\r\n`,
        JSON.stringify({ conversationId: conv.conversationId, payload: { type: 'text', text: marker } }),
      );
      outcome.answered = true;
      if (measured) answerLatencies.push(performance.now() - at);
      // Refused by admission control, before anything was stored: no reply is owed (not missing).
      if (sent.status === 429) {
        if (measured) refused++;
      } else if (sent.status === 201) outcome.acknowledged = true;
      else throw new Error(`createMessage answered ${sent.status}: ${sent.body.toString().slice(0, 300)}`);
    } catch (err) {
      if (ended) return;
      sendErrors++;
      firstError ??= (err as Error).message;
    } finally {
      give(conn);
    }
  };

  // Each conversation on its own schedule: a random phase, then every intervalMs until the window ends.
  const timers = new Set<NodeJS.Timeout>();
  const schedule = (c: number, phase: number, seq: number) => {
    const at = start + phase + seq * job.intervalMs;
    if (at >= end) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        void send(c, seq, at);
        schedule(c, phase, seq + 1);
      },
      Math.max(0, at - performance.now()),
    );
    timers.add(timer);
  };
  for (let c = 0; c < held.length; c++) schedule(c, Math.random() * job.intervalMs, 0);
  // Until every send of the window went out (a late timer too), then each measured reply settles when it
  // comes or at the deadline: the run ends by then whatever the server does.
  await sleep(end - performance.now());
  while (timers.size > 0 && performance.now() < deadline) await sleep(10);
  await Promise.all(counted);
  ended = true;
  for (const t of timers) clearTimeout(t);
  for (const c of all) c.close();
  const sent = counted.length;
  return {
    conversations: held.length,
    offeredRate: (held.length / job.intervalMs) * 1000,
    sent,
    rate: (repliesInWindow / job.durationMs) * 1000,
    latency: summarize(latencies),
    missing: outcomes.filter((o) => o.acknowledged && !o.replied).length,
    acknowledged: outcomes.filter((o) => o.acknowledged).length,
    answerLatency: summarize(answerLatencies),
    connectionWaits,
    unsent: outcomes.filter((o) => !o.sent).length,
    hanging: outcomes.filter((o) => o.sent && !o.answered).length,
    refused,
    sendErrors,
    ...(firstError !== undefined && { firstError }),
    windowMs: job.durationMs,
    connections: all.length,
  };
}

async function heldClose(): Promise<Record<string, never>> {
  for (const h of held.splice(0)) h.listener.close();
  await sleep(200);
  return {};
}

// ---------------------------------------------------------------------------------------------------

function handle(job: Job): Promise<JobResult> {
  switch (job.kind) {
    case 'chat':
      if (job.system === 'parley') return chatParley(job);
      if (job.system === 'botkit') return chatBotkit(job);
      return chatDirectLine(job);
    case 'http':
      return httpRun(job);
    case 'fanout-open':
      return fanoutOpen(job);
    case 'fanout-deliver':
      return fanoutDeliver(job);
    case 'fanout-close':
      return fanoutClose();
    case 'held-open':
      return heldOpen(job);
    case 'held-run':
      return heldRun(job);
    case 'held-close':
      return heldClose();
  }
}

serveJobs('bench/load.ts', handle);
