// The Runtime API operations the console uses (`/v1/chat`): read as one bot (`x-bot-id`) with the
// operator's personal token, which the server accepts for members of the bot's workspace.
import { HEADERS } from '../../../src/contract/headers.ts';
import { request } from './http.ts';
import type { Query } from './http.ts';
import type { Out } from './types.ts';

const base = '/v1/chat';

const asBot = <T>(botId: string, path: string, query: Query, signal?: AbortSignal) =>
  request<T>('GET', `${base}${path}`, {
    query,
    headers: { [HEADERS.botId]: botId },
    ...(signal && { signal }),
  });

export interface ConversationFilters {
  participantIds?: string[];
  tags?: Record<string, string>;
  afterDate?: string;
  beforeDate?: string;
}

export const runtime = {
  listConversations: (botId: string, filters: ConversationFilters & { nextToken?: string }) =>
    asBot<Out<'listConversations'>>(botId, '/conversations', { pageSize: 50, ...filters }),
  getConversation: (botId: string, conversationId: string) =>
    asBot<Out<'getConversation'>>(botId, `/conversations/${encodeURIComponent(conversationId)}`, {}),
  listMessages: (
    botId: string,
    query: { conversationId: string; afterDate?: string; nextToken?: string },
    signal?: AbortSignal,
  ) => asBot<Out<'listMessages'>>(botId, '/messages', { pageSize: 100, ...query }, signal),
  getMessage: (botId: string, messageId: string) =>
    asBot<Out<'getMessage'>>(botId, `/messages/${encodeURIComponent(messageId)}`, {}),
  listEvents: (botId: string, query: { conversationId: string; nextToken?: string }, signal?: AbortSignal) =>
    asBot<Out<'listEvents'>>(botId, '/events', { pageSize: 100, ...query }, signal),
  listParticipants: (botId: string, conversationId: string) =>
    asBot<Out<'listParticipants'>>(
      botId,
      `/conversations/${encodeURIComponent(conversationId)}/participants`,
      {
        pageSize: 100,
      },
    ),
};
