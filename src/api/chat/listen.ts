import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConversationLog, RecordedSignal } from '../../domain/live/conversation-log.ts';
import type { Following } from '../../domain/live/follow.ts';
import { missedSignalsBlock, openEventStream } from '../event-stream.ts';
import { queryValue } from '../headers.ts';

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
  const raw = (Array.isArray(header) ? header[0] : header) ?? queryValue(request, 'lastEventId');
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined;
  return Number(raw);
}

/**
 * Streams a conversation's signals as server-sent events: unnamed frames `data: {"type","data"}` with
 * `id:` the signal's number, and a `data: ping` keep-alive. The conversation log gives the signals in
 * order, after the point a reconnecting client names; this only writes them.
 */
export async function streamConversation(
  request: FastifyRequest,
  reply: FastifyReply,
  options: ListenOptions,
): Promise<void> {
  const stream = openEventStream(reply, {
    keepAlive: { intervalMs: options.pingIntervalMs, text: 'data: ping\n\n' },
    streams: options.streams,
  });
  let following: Following | undefined;
  stream.onClose(() => following?.close());
  const failed = (err: unknown) => {
    request.log.warn({ err, conversationId: options.conversationId }, 'live stream failed; closing it');
    stream.close();
  };
  try {
    following = await options.log.follow(options.conversationId, {
      after: resumePoint(request),
      deliver: (signal) => {
        stream.write(block(signal));
        if (signal.removedUserId === options.userId) stream.close();
      },
      missed: (missed) => stream.write(missedSignalsBlock(missed)),
      failed,
    });
    // The client left while the log was read.
    if (stream.closed) following.close();
  } catch (err) {
    failed(err);
  }
}
