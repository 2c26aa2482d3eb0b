import type { ChatKeySession, ChatSession } from '../../domain/chat/chat.ts';
import type { webchatMessageOperations, webchatTurnOperations } from '../../contract/webchat/messages.ts';
import type { Handlers } from '../operation.ts';
import { sharedHandlers } from '../chat/shared.ts';

export const webchatMessageHandlers = {
  getMessage: async (d, session, { id }) => ({ message: await d.webchat.getMessage(session, id) }),
  updateMessage: async (d, session, { id, payload }) => ({
    message: await d.webchat.updateMessage(session, id, payload),
  }),
  deleteMessage: sharedHandlers.deleteMessage,
  addMessageFeedback: async (d, session, { id, value, comment }) => {
    await d.webchat.setFeedback(session, id, { value, ...(comment !== undefined && { comment }) });
    return {};
  },
  removeMessageFeedback: async (d, session, { id }) => {
    await d.webchat.setFeedback(session, id, null);
    return {};
  },
  createEvent: async (d, session, { conversationId, payload }) => ({
    event: await d.webchat.createEvent(session, conversationId, payload),
  }),
  getEvent: async (d, session, { id }) => ({ event: await d.webchat.getEvent(session, id) }),
  createFile: async (d, session, body) => ({ file: await d.webchat.createFile(session, body) }),
} satisfies Handlers<ChatSession, typeof webchatMessageOperations>;

export const webchatTurnHandlers = {
  createMessage: async (d, session, { payload, conversationId, metadata }) => ({
    message: await d.webchat.createMessage(session, conversationId, payload, metadata),
  }),
} satisfies Handlers<ChatKeySession, typeof webchatTurnOperations>;
