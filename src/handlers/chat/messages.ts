import type { ChatKeySession, ChatSession } from '../../domain/chat/chat.ts';
import type { chatMessageOperations, chatTurnOperations } from '../../contract/chat/messages.ts';
import type { Handlers } from '../operation.ts';
import { sharedHandlers } from './shared.ts';

export const chatMessageHandlers = {
  getMessage: async (d, session, { id }) => ({ message: await d.chat.getMessage(session, id) }),
  deleteMessage: sharedHandlers.deleteMessage,
  listMessages: (d, session, { conversationId, ...page }) =>
    d.chat.listMessages(session, conversationId, page),
  getEvent: async (d, session, { id }) => ({ event: await d.chat.getEvent(session, id) }),
} satisfies Handlers<ChatSession, typeof chatMessageOperations>;

export const chatTurnHandlers = {
  createMessage: async (d, session, { payload, conversationId, metadata }) => ({
    message: await d.chat.createMessage(session, conversationId, payload, metadata),
  }),
  createEvent: async (d, session, { payload, conversationId }) => ({
    event: await d.chat.createEvent(session, conversationId, payload),
  }),
} satisfies Handlers<ChatKeySession, typeof chatTurnOperations>;
