import {
  CHAT_TURN_OPERATIONS,
  CHAT_USER_OPERATIONS,
  CHAT_VISITOR_OPERATIONS,
} from '../../contract/chat/index.ts';
import type { ChatKeySession, ChatSession, ChatVisitor } from '../../domain/chat/chat.ts';
import { implement } from '../operation.ts';
import { chatConversationHandlers } from './conversations.ts';
import { chatMessageHandlers, chatTurnHandlers } from './messages.ts';
import { chatUserHandlers, chatVisitorHandlers } from './users.ts';

// The Chat API's tables (contract/chat/index.ts) bound to the domain, as a visitor, as an end user, and as
// one whose turn admission let in before the user was read.

export const CHAT_VISITOR_HANDLERS = implement<ChatVisitor>()(CHAT_VISITOR_OPERATIONS, chatVisitorHandlers);

export const CHAT_USER_HANDLERS = implement<ChatSession>()(CHAT_USER_OPERATIONS, {
  ...chatUserHandlers,
  ...chatConversationHandlers,
  ...chatMessageHandlers,
});

export const CHAT_TURN_HANDLERS = implement<ChatKeySession>()(CHAT_TURN_OPERATIONS, chatTurnHandlers);
