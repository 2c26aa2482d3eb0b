// The Chat API of one bot's channel, as an end user: what the try-it panel speaks. Always same-origin:
// the console reaches the channel where it reaches the server.
import { mountOf } from '../../../src/contract/apis.ts';
import { listenConversation } from '../../../src/contract/chat/index.ts';
import { requestOf, targetOf } from '../../../src/contract/client.ts';
import { HEADERS } from '../../../src/contract/headers.ts';
import { APIS, apiClient } from './client.ts';
import { ApiError } from './http.ts';
import type { ChatMessage } from './types.ts';

export interface ChatSession {
  webhookId: string;
  userKey: string;
  userId: string;
  conversationId: string;
}

/**
 * The channel's Chat API, as a visitor or as the end user a key names: these calls carry no session
 * credentials (the user's key replaces the operator's token).
 */
const channel = (webhookId: string, userKey?: string) =>
  apiClient(
    APIS.chat,
    { credentials: null, ...(userKey !== undefined && { headers: { [HEADERS.userKey]: userKey } }) },
    { webhookId },
  );

export async function startChat(webhookId: string): Promise<ChatSession> {
  const { user, key } = await channel(webhookId).createUser({ name: 'Console' });
  const { conversation } = await channel(webhookId, key).createConversation();
  return { webhookId, userKey: key, userId: user.id, conversationId: conversation.id };
}

export async function sendText(chat: ChatSession, text: string): Promise<ChatMessage> {
  const { message } = await channel(chat.webhookId, chat.userKey).createMessage({
    conversationId: chat.conversationId,
    payload: { type: 'text', text },
  });
  return message;
}

/** Where a listener stands in the conversation's stream: the id of the last frame it got (0: none). */
export interface StreamPosition {
  lastEventId: number;
}

/**
 * Listens to the conversation's server-sent events (`message_created` frames) until `signal` aborts;
 * resolves when the stream ends. It resumes after `position` and keeps it up to date, so that nothing
 * sent before the stream opened (the bot's first reply) or while it reconnected is missed.
 * fetch, not EventSource: the stream needs the `x-user-key` header.
 */
export async function listen(
  chat: ChatSession,
  onMessage: (message: ChatMessage) => void,
  signal: AbortSignal,
  position: StreamPosition,
): Promise<void> {
  const wire = requestOf(listenConversation, {
    id: chat.conversationId,
    lastEventId: String(position.lastEventId),
  });
  const response = await fetch(`${mountOf(APIS.chat, { webhookId: chat.webhookId })}${targetOf(wire)}`, {
    headers: { [HEADERS.userKey]: chat.userKey, accept: 'text/event-stream' },
    signal,
  });
  if (!response.ok || !response.body)
    throw new ApiError(response.status, 'Unknown', 'The conversation cannot be listened to');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = frame.split('\n').find((line) => line.startsWith('id:'));
      if (id !== undefined) position.lastEventId = Number(id.slice(3).trim()) || position.lastEventId;
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data || data === 'ping') continue;
      const signal = JSON.parse(data) as { type?: string; data?: ChatMessage };
      if (signal.type === 'message_created' && signal.data) onMessage(signal.data);
    }
  }
}
