import type { ChatSession } from '../../domain/chat/chat.ts';
import type { webchatConversationOperations } from '../../contract/webchat/conversations.ts';
import type { Handlers } from '../operation.ts';
import { sharedHandlers } from '../chat/shared.ts';

export const webchatConversationHandlers = {
  createConversation: async (d, session) => ({ conversation: await d.webchat.createConversation(session) }),
  listConversations: (d, session, page) => d.webchat.listConversations(session, page),
  getConversation: async (d, session, { id }) => ({
    conversation: await d.webchat.getConversation(session, id),
  }),
  deleteConversation: sharedHandlers.deleteConversation,
  listConversationMessages: (d, session, { id, ...page }) => d.webchat.listMessages(session, id, page),
  addParticipant: async (d, session, { id, userId }) => ({
    participant: await d.webchat.addParticipant(session, id, userId),
  }),
  listParticipants: (d, session, { id, ...page }) => d.webchat.listParticipants(session, id, page),
  getParticipant: async (d, session, { id, userId }) => ({
    participant: await d.webchat.getParticipant(session, id, userId),
  }),
  removeParticipant: async (d, session, { id, userId }) => {
    await d.webchat.removeParticipant(session, id, userId);
    return {};
  },
} satisfies Handlers<ChatSession, typeof webchatConversationOperations>;
