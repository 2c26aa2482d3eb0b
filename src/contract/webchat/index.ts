import type { ChatSession } from '../../domain/chat/chat.ts';
import type { WebchatVisitor } from '../../domain/webchat/webchat.ts';
import type { Operation } from '../operation.ts';
import { webchatConversationOperations } from './conversations.ts';
import { webchatMessageOperations } from './messages.ts';
import { webchatSiteOperations, webchatUserOperations, webchatVisitorOperations } from './users.ts';

/** The webchat API operations of a visitor (no user key needed). */
export const WEBCHAT_VISITOR_OPERATIONS: readonly Operation<WebchatVisitor>[] = webchatVisitorOperations;

/** The webchat API operations of a site's backend, authenticated by `x-admin-secret`. */
export const WEBCHAT_SITE_OPERATIONS: readonly Operation<WebchatVisitor>[] = webchatSiteOperations;

/** The webchat API operations of an end user authenticated by `x-user-key`. */
export const WEBCHAT_USER_OPERATIONS: readonly Operation<ChatSession>[] = [
  ...webchatUserOperations,
  ...webchatConversationOperations,
  ...webchatMessageOperations,
];
