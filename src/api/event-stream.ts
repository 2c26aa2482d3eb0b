import type { MissedSignals } from '../domain/live/follow.ts';
import type { FastifyReply } from 'fastify';
import { headersOf } from './headers.ts';

/** A stream whose client reads slower than this many buffered bytes is closed; it resumes with Last-Event-ID. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface EventStreamOptions {
  /** Written every `intervalMs` so that idle connections stay open. */
  keepAlive: { intervalMs: number; text: string };
  /** Open streams, so that the server can end them when it stops. */
  streams: Set<() => void>;
}

/** An open `text/event-stream` answer. */
export interface EventStream {
  /** Writes SSE text as is; nothing once closed. */
  write(text: string): void;
  close(): void;
  readonly closed: boolean;
  /** Called once, when the stream closes (the client left, the server stops, or `close`). */
  onClose(callback: () => void): void;
}

/**
 * Takes the answer over from Fastify and opens an event stream on it: status 200, the headers the
 * reply already carries (CORS) plus the stream's own, a keep-alive, and an end when the server stops.
 */
export function openEventStream(reply: FastifyReply, options: EventStreamOptions): EventStream {
  const inherited = headersOf(reply);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...inherited,
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();

  const life = openConnection({
    openStreams: reply.server.metrics.openStreams,
    streams: options.streams,
    ping: { intervalMs: options.keepAlive.intervalMs, send: () => write(options.keepAlive.text) },
    finish: () => res.end(),
  });
  const close = () => life.end();
  const write = (text: string) => {
    if (life.closed) return;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) close();
  };
  res.on('close', close);
  return {
    write,
    close,
    get closed() {
      return life.closed;
    },
    onClose: (callback) => life.onClose(callback),
  };
}

/** The life of one open listening connection, whatever its protocol (see `openConnection`). */
export interface Connection {
  /** Ends it, once: `code` says why, where the protocol can say it (a WebSocket's close code). */
  end(code?: number): void;
  readonly closed: boolean;
  /** Called once, when it ends (the client left, the server stops, or `end`). */
  onClose(callback: () => void): void;
}

export interface ConnectionOptions {
  /** The gauge of open streams, which counts it while it is open. */
  openStreams: { inc(): void; dec(): void };
  /** Open streams, so that the server can end them when it stops. */
  streams: Set<() => void>;
  /** A keep-alive sent every `intervalMs`. */
  ping: { intervalMs: number; send(): void };
  /** How a stopping server ends it. */
  stopCode?: number;
  /** Ends the transport, once. */
  finish(code?: number): void;
}

/** What every listening connection keeps: its keep-alive, its place among the open streams, its end. */
export function openConnection(options: ConnectionOptions): Connection {
  const callbacks: (() => void)[] = [];
  let closed = false;
  const end = (code?: number) => {
    if (closed) return;
    closed = true;
    options.openStreams.dec();
    clearInterval(ping);
    options.streams.delete(stop);
    for (const callback of callbacks.splice(0)) callback();
    options.finish(code);
  };
  const stop = () => end(options.stopCode);
  const ping = setInterval(() => options.ping.send(), options.ping.intervalMs);
  options.streams.add(stop);
  options.openStreams.inc();
  return {
    end,
    get closed() {
      return closed;
    },
    onClose: (callback) => {
      if (closed) callback();
      else callbacks.push(callback);
    },
  };
}

/**
 * The frame that stands for signals a listener asked for (by `Last-Event-ID`) that the log no longer
 * holds: `{"type":"signals_missed","data":{"from","to"}}` with the last missed number as its id. A client
 * that gets it reads the conversation again (the official chat client hands it to its `unknown` event).
 */
export function missedSignalsBlock(missed: MissedSignals): string {
  return `id: ${missed.to}\ndata: ${JSON.stringify({ type: 'signals_missed', data: missed })}\n\n`;
}
