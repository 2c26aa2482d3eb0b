import type { ChatSession } from '../../domain/chat/chat.ts';
import type { chatConversationOperations } from '../../contract/chat/conversations.ts';
import type { Handlers } from '../operation.ts';
import { sharedHandlers } from './shared.ts';

export const chatConversationHandlers = {
  createConversation: async (d, session, { id }) => ({
    conversation: await d.chat.createConversation(session, id),
  }),
  getOrCreateConversation: async (d, session, { id }) => ({
    conversation: await d.chat.getOrCreateConversation(session, id),
  }),
  getConversation: async (d, session, { id }) => ({
    conversation: await d.chat.getConversation(session, id),
  }),
  deleteConversation: sharedHandlers.deleteConversation,
  listConversations: (d, session, page) => d.chat.listConversations(session, page),
  addParticipant: async (d, session, { conversationId, userId }) => ({
    participant: await d.chat.addParticipant(session, conversationId, userId),
  }),
  getParticipant: async (d, session, { conversationId, userId }) => ({
    participant: await d.chat.getParticipant(session, conversationId, userId),
  }),
  removeParticipant: async (d, session, { conversationId, userId }) => {
    await d.chat.removeParticipant(session, conversationId, userId);
    return {};
  },
  listParticipants: (d, session, { conversationId, ...page }) =>
    d.chat.listParticipants(session, conversationId, page),
} satisfies Handlers<ChatSession, typeof chatConversationOperations>;
