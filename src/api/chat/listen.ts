import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConversationLog, RecordedSignal } from '../../domain/live.ts';
import { BACKLOG_LIMIT } from '../../domain/live.ts';

/** A stream whose client reads slower than this many buffered bytes is closed; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface ListenOptions {
  log: ConversationLog;
  conversationId: string;
  /** Parley's id of the listening user: its removal from the conversation ends the stream. */
  userId: string;
  pingIntervalMs: number;
  /** Open streams, so that the server can end them when it stops. */
  streams: Set<() => void>;
}

/** The SSE block of a signal: written as is to every listener, so built once. */
const blocks = new WeakMap<RecordedSignal, string>();
function block(signal: RecordedSignal): string {
  let text = blocks.get(signal);
  if (text === undefined) {
    text = `id: ${signal.seq}\ndata: ${signal.frame}\n\n`;
    blocks.set(signal, text);
  }
  return text;
}

/** The sequence number a reconnecting client last received: `Last-Event-ID`, or a `lastEventId` query parameter. */
export function resumePoint(request: FastifyRequest): number | undefined {
  const header = request.headers['last-event-id'];
  const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
  const raw = (Array.isArray(header) ? header[0] : header) ?? (typeof query === 'string' ? query : undefined);
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined;
  return Number(raw);
}

/**
 * Streams a conversation's signals as server-sent events: unnamed frames `data: {"type","data"}` with
 * `id:` the signal's number, in number order, and a `data: ping` keep-alive. A client that reconnects
 * with the last number it received first gets what it missed (up to the backlog limit).
 */
export async function streamConversation(
  request: FastifyRequest,
  reply: FastifyReply,
  options: ListenOptions,
): Promise<void> {
  const { log, conversationId } = options;
  const resume = resumePoint(request);
  const last = await log.lastSeq(conversationId);
  // A number from the future (another conversation's, or made up) resumes from now.
  let delivered = resume === undefined ? last : Math.min(resume, last);
  const pending: RecordedSignal[] = [];
  let draining = false;
  let closed = false;

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();

  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(ping);
    options.streams.delete(close);
    res.end();
  };
  const write = (text: string) => {
    if (closed) return;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) close();
  };
  const deliver = (signal: RecordedSignal) => {
    write(block(signal));
    delivered = signal.seq;
    if (signal.removedUserId === options.userId) close();
  };

  // Signals are delivered one at a time in number order; a number that arrives early waits while
  // the ones before it are read from the log.
  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      while (pending.length > 0 && !closed) {
        pending.sort((a, b) => a.seq - b.seq);
        const next = pending.shift() as RecordedSignal;
        if (next.seq <= delivered) continue;
        if (next.seq > delivered + 1) {
          for (const missed of await log.since(conversationId, delivered, BACKLOG_LIMIT)) {
            if (missed.seq < next.seq && missed.seq > delivered) deliver(missed);
          }
        }
        deliver(next);
      }
    } catch (err) {
      request.log.warn({ err, conversationId }, 'live stream failed; closing it');
      close();
    } finally {
      draining = false;
    }
  };

  const unsubscribe = log.bus.subscribe(conversationId, (signal) => {
    pending.push(signal);
    void drain();
  });
  const ping = setInterval(() => write('data: ping\n\n'), options.pingIntervalMs);
  options.streams.add(close);
  res.on('close', close);

  if (delivered < last) {
    pending.push(...(await log.since(conversationId, delivered)));
    await drain();
  }
}
