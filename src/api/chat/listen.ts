import type { WebSocket } from '@fastify/websocket';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { ConversationLog, RecordedSignal } from '../../domain/live/conversation-log.ts';
import type { ListenableConversation } from '../../domain/chat/chat.ts';
import { follow } from '../../domain/live/follow.ts';
import type { Following, MissedSignals } from '../../domain/live/follow.ts';
import { MAX_BUFFERED_BYTES, missedSignalsBlock, openConnection, openEventStream } from '../event-stream.ts';
import { queryValue } from '../headers.ts';

export interface ListenOptions {
  log: ConversationLog;
  /** A new listener receives every signal after the conversation's position when its request came. */
  listened: ListenableConversation;
  /** Parley's id of the listening user: its removal from the conversation ends the stream. */
  userId: string;
  pingIntervalMs: number;
  /** Open streams, so that the server can end them when it stops. */
  streams: Set<() => void>;
}

/** One open connection of a listener, whatever its protocol: it writes signals and is closed. */
interface SignalOutlet {
  signal(signal: RecordedSignal): void;
  missed(missed: MissedSignals): void;
  /** The listener was removed from the conversation: it should not reconnect. */
  close(): void;
  /** The server could not go on (the store failed): the client reconnects and resumes. */
  fail(): void;
  readonly closed: boolean;
  onClose(callback: () => void): void;
}

/** The text keep-alive of both protocols: the official client hands it to its `unknown` event. */
const PING = 'ping';

/** The sequence number a reconnecting client last received: `Last-Event-ID`, or a `lastEventId` query parameter. */
export function resumePoint(request: FastifyRequest): number | undefined {
  const header = request.headers['last-event-id'];
  const raw = (Array.isArray(header) ? header[0] : header) ?? queryValue(request, 'lastEventId');
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined;
  return Number(raw);
}

/**
 * Relays a conversation's signals to one listener: every signal after the point a reconnecting client
 * names, in order, and the end of the connection once the listener is removed from the conversation.
 * The conversation log gives the signals; the outlet only writes them.
 */
async function relay(request: FastifyRequest, outlet: SignalOutlet, options: ListenOptions): Promise<void> {
  let following: Following | undefined;
  outlet.onClose(() => following?.close());
  const failed = (err: unknown) => {
    request.log.warn(
      { err, conversationId: options.listened.conversationId },
      'live stream failed; closing it',
    );
    outlet.fail();
  };
  try {
    following = await follow(options.log, options.listened.conversationId, {
      after: resumePoint(request) ?? options.listened.position,
      deliver: (signal) => {
        outlet.signal(signal);
        if (signal.removedUserId === options.userId) outlet.close();
      },
      missed: (missed) => outlet.missed(missed),
      failed,
    });
    // The client left while the log was read.
    if (outlet.closed) following.close();
  } catch (err) {
    failed(err);
  }
}

/** A text frame per signal, written as is to every listener, so built once per protocol. */
function cachedFrames(build: (signal: RecordedSignal) => string): (signal: RecordedSignal) => string {
  const frames = new WeakMap<RecordedSignal, string>();
  return (signal) => {
    let text = frames.get(signal);
    if (text === undefined) {
      text = build(signal);
      frames.set(signal, text);
    }
    return text;
  };
}

/** SSE: `id:` the signal's number, `data:` its JSON. */
const sseBlock = cachedFrames((signal) => `id: ${signal.seq}\ndata: ${signal.frame}\n\n`);

/**
 * WebSocket: the same JSON as the SSE `data:` line, with the signal's number as `id` (a string, as an
 * EventSource's `lastEventId` is) since a WebSocket has no `id:` field: a client resumes with it.
 */
const webSocketMessage = cachedFrames((signal) => withId(signal.frame, signal.seq));

function withId(json: string, seq: number): string {
  return `${json.slice(0, -1)},"id":"${seq}"}`;
}

/**
 * Streams a conversation's signals as server-sent events: unnamed frames `data: {"type","data"}` with
 * `id:` the signal's number, and a `data: ping` keep-alive.
 */
export async function streamConversation(
  request: FastifyRequest,
  reply: FastifyReply,
  options: ListenOptions,
): Promise<void> {
  const stream = openEventStream(reply, {
    keepAlive: { intervalMs: options.pingIntervalMs, text: `data: ${PING}\n\n` },
    streams: options.streams,
  });
  await relay(
    request,
    {
      signal: (signal) => stream.write(sseBlock(signal)),
      missed: (missed) => stream.write(missedSignalsBlock(missed)),
      close: () => stream.close(),
      fail: () => stream.close(),
      get closed() {
        return stream.closed;
      },
      onClose: (callback) => stream.onClose(callback),
    },
    options,
  );
}

/** Close codes of a listening WebSocket (RFC 6455, 7.4.1). */
const CLOSE = {
  /** The listener was removed from the conversation. */
  normal: 1000,
  /** The server stops. */
  goingAway: 1001,
  /** The server failed to go on (the store did not answer): the client resumes. */
  internalError: 1011,
  /** The client reads slower than the signals come: it reconnects with `lastEventId`. */
  tryAgainLater: 1013,
} as const;

/**
 * Streams a conversation's signals over an upgraded WebSocket: one text message per signal (the SSE
 * `data:` JSON plus its `id`), a `ping` text message as keep-alive. What the client sends is ignored.
 */
export async function socketConversation(
  request: FastifyRequest,
  socket: WebSocket,
  options: ListenOptions,
): Promise<void> {
  const outlet = openSocketOutlet(socket, request.server.metrics.openStreams, request.log, options);
  await relay(request, outlet, options);
}

function openSocketOutlet(
  socket: WebSocket,
  openStreams: { inc(): void; dec(): void },
  log: FastifyBaseLogger,
  options: ListenOptions,
): SignalOutlet {
  const life = openConnection({
    openStreams,
    streams: options.streams,
    ping: { intervalMs: options.pingIntervalMs, send: () => send(PING) },
    stopCode: CLOSE.goingAway,
    finish: (code) => {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code);
    },
  });
  const send = (text: string) => {
    if (life.closed) return;
    socket.send(text);
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) life.end(CLOSE.tryAgainLater);
  };
  socket.on('close', () => life.end(CLOSE.normal));
  socket.on('error', (err) => {
    log.debug({ err }, 'listening socket failed');
    life.end(CLOSE.goingAway);
  });
  return {
    signal: (signal) => send(webSocketMessage(signal)),
    missed: (missed) => send(withId(JSON.stringify({ type: 'signals_missed', data: missed }), missed.to)),
    close: () => life.end(CLOSE.normal),
    fail: () => life.end(CLOSE.internalError),
    get closed() {
      return life.closed;
    },
    onClose: (callback) => life.onClose(callback),
  };
}
