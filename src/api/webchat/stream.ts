import type { FastifyRequest } from 'fastify';
import type { ChatSession } from '../../domain/chat/chat.ts';
import type { ConversationLog } from '../../domain/live/conversation-log.ts';
import { follow } from '../../domain/live/follow.ts';
import type { Following } from '../../domain/live/follow.ts';
import type { Webchat } from '../../domain/webchat/webchat.ts';
import { missedSignalsBlock } from '../event-stream.ts';
import type { EventStream } from '../event-stream.ts';

export interface FollowOptions {
  log: ConversationLog;
  webchat: Webchat;
  session: ChatSession;
  runtimeConversationId: string;
  /** The last signal the client has: it receives every later one. */
  after: number | undefined;
}

/**
 * Writes a conversation's signals to an open stream as the webchat's frames, in order (each signal is
 * translated before the next is written), until the stream closes or the user leaves the conversation.
 */
export async function followConversation(
  request: FastifyRequest,
  stream: EventStream,
  { log, webchat, session, runtimeConversationId, after }: FollowOptions,
): Promise<void> {
  let following: Following | undefined;
  stream.onClose(() => following?.close());
  const failed = (err: unknown) => {
    request.log.warn({ err, conversationId: runtimeConversationId }, 'webchat stream failed; closing it');
    stream.close();
  };
  let written: Promise<void> = Promise.resolve();
  try {
    following = await follow(log, runtimeConversationId, {
      after,
      deliver: (signal) => {
        written = written
          .then(async () => {
            for (const frame of await webchat.framesOf(signal, session)) stream.write(frame);
            if (signal.removedUserId === session.userId) stream.close();
          })
          .catch(failed);
      },
      missed: (missed) => {
        written = written.then(() => stream.write(missedSignalsBlock(missed))).catch(failed);
      },
      failed,
    });
    // The client left while the log was read.
    if (stream.closed) following.close();
  } catch (err) {
    failed(err);
  }
}
