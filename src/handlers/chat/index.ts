import { CHAT_USER_OPERATIONS, CHAT_VISITOR_OPERATIONS } from '../../contract/chat/index.ts';
import type { ChatSession, ChatVisitor } from '../../domain/chat/chat.ts';
import { implement } from '../operation.ts';
import { chatConversationHandlers } from './conversations.ts';
import { chatMessageHandlers } from './messages.ts';
import { chatUserHandlers, chatVisitorHandlers } from './users.ts';

// The Chat API's tables (contract/chat/index.ts) bound to the domain, as a visitor and as an end user.

export const CHAT_VISITOR_HANDLERS = implement<ChatVisitor>()(CHAT_VISITOR_OPERATIONS, chatVisitorHandlers);

export const CHAT_USER_HANDLERS = implement<ChatSession>()(CHAT_USER_OPERATIONS, {
  ...chatUserHandlers,
  ...chatConversationHandlers,
  ...chatMessageHandlers,
});
