import type { ChatSession, ChatVisitor } from '../../domain/chat/chat.ts';
import type { chatVisitorOperations, chatUserOperations } from '../../contract/chat/users.ts';
import type { Handlers } from '../operation.ts';
import { sharedHandlers } from './shared.ts';

export const chatVisitorHandlers = {
  createUser: (d, visitor, body) => d.chat.createUser(visitor, body),
  getOrCreateUser: async (d, visitor, body) => ({
    user: await d.chat.getOrCreateUser(visitor, visitor.key, body),
  }),
} satisfies Handlers<ChatVisitor, typeof chatVisitorOperations>;

export const chatUserHandlers = {
  getUser: async (d, session) => ({ user: await d.chat.getUser(session) }),
  updateUser: async (d, session, body) => ({ user: await d.chat.updateUser(session, body) }),
  deleteUser: sharedHandlers.deleteUser,
} satisfies Handlers<ChatSession, typeof chatUserOperations>;
