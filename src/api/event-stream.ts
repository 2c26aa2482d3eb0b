import type { MissedSignals } from '../domain/live/follow.ts';
import type { FastifyReply } from 'fastify';

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
  const inherited: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) inherited[name] = value;
  }
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

  const callbacks: (() => void)[] = [];
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    reply.server.metrics.openStreams.dec();
    clearInterval(ping);
    options.streams.delete(close);
    for (const callback of callbacks.splice(0)) callback();
    res.end();
  };
  const write = (text: string) => {
    if (closed) return;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) close();
  };
  const ping = setInterval(() => write(options.keepAlive.text), options.keepAlive.intervalMs);
  options.streams.add(close);
  reply.server.metrics.openStreams.inc();
  res.on('close', close);
  return {
    write,
    close,
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
