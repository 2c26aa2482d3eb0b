import type { ChatSession, ChatVisitor } from '../../domain/chat/chat.ts';
import { operationsFor } from '../operation.ts';

/** Chat API operations of a channel's visitors: no user yet, or a key that names one to create. */
export const visitor = operationsFor<ChatVisitor>();
/** Chat API operations of an authenticated end user (`x-user-key`). */
export const user = operationsFor<ChatSession>();

export const tag = 'Chat';
