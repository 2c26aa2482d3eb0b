import type { ChatSession, ChatVisitor } from '../../domain/chat/chat.ts';
import type { Operation } from '../operation.ts';
import { chatConversationOperations } from './conversations.ts';
import { chatMessageOperations } from './messages.ts';
import { chatUserOperations, chatVisitorOperations } from './users.ts';

/** The Chat API operations a channel's visitor calls before having (or to get) a user. */
export const CHAT_VISITOR_OPERATIONS: readonly Operation<ChatVisitor>[] = chatVisitorOperations;

/** The Chat API operations of an end user authenticated by `x-user-key`. */
export const CHAT_USER_OPERATIONS: readonly Operation<ChatSession>[] = [
  ...chatUserOperations,
  ...chatConversationOperations,
  ...chatMessageOperations,
];
