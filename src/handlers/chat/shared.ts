import type { ChatSession } from '../../domain/chat/chat.ts';
import type { deleteConversation, deleteMessage, deleteUser } from '../../contract/chat/shared.ts';
import type { Handlers } from '../operation.ts';

/** The operations the webchat API answers as the Chat API does (contract/chat/shared.ts), handled once for both. */
export const sharedHandlers = {
  deleteUser: async (d, session) => {
    await d.chat.deleteUser(session);
    return {};
  },
  deleteConversation: async (d, session, { id }) => {
    await d.chat.deleteConversation(session, id);
    return {};
  },
  deleteMessage: async (d, session, { id }) => {
    await d.chat.deleteMessage(session, id);
    return {};
  },
} satisfies Handlers<
  ChatSession,
  [ReturnType<typeof deleteUser>, ReturnType<typeof deleteConversation>, ReturnType<typeof deleteMessage>]
>;
