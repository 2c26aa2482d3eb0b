// The Runtime API operations the console uses, through the contract's client: read as one bot
// (`x-bot-id`) with the operator's personal token, which the server accepts for members of the bot's
// workspace.
import { HEADERS } from '../../../src/contract/headers.ts';
import { PAGE_SIZE_MAX } from '../../../src/domain/shared/page-size.ts';
import { APIS, apiClient } from './client.ts';

/** The Runtime API as `botId`, its calls cancelled by `signal`. */
const asBot = (botId: string, signal?: AbortSignal) =>
  apiClient(APIS.runtime, { headers: { [HEADERS.botId]: botId }, ...(signal && { signal }) });

/** A screenful of conversations: the filters are changed between loads. */
const CONVERSATIONS_PAGE = 50;

export interface ConversationFilters {
  participantIds?: string[];
  tags?: Record<string, string>;
  afterDate?: string;
  beforeDate?: string;
}

export const runtime = {
  listConversations: (botId: string, filters: ConversationFilters & { nextToken?: string }) =>
    asBot(botId).listConversations({ pageSize: CONVERSATIONS_PAGE, ...filters }),
  getConversation: (botId: string, conversationId: string) =>
    asBot(botId).getConversation({ id: conversationId }),
  listMessages: (
    botId: string,
    query: { conversationId: string; afterDate?: string; nextToken?: string },
    signal?: AbortSignal,
  ) => asBot(botId, signal).listMessages({ pageSize: PAGE_SIZE_MAX, ...query }),
  /** The conversation's newest message, if any (messages are listed newest first). */
  lastMessage: async (botId: string, conversationId: string) =>
    (await asBot(botId).listMessages({ conversationId, pageSize: 1 })).messages[0],
  getMessage: (botId: string, messageId: string) => asBot(botId).getMessage({ id: messageId }),
  listEvents: (botId: string, query: { conversationId: string; nextToken?: string }, signal?: AbortSignal) =>
    asBot(botId, signal).listEvents({ pageSize: PAGE_SIZE_MAX, ...query }),
  listParticipants: (botId: string, conversationId: string) =>
    asBot(botId).listParticipants({ id: conversationId, pageSize: PAGE_SIZE_MAX }),
};
