import {
  WEBCHAT_SITE_OPERATIONS,
  WEBCHAT_TURN_OPERATIONS,
  WEBCHAT_USER_OPERATIONS,
  WEBCHAT_VISITOR_OPERATIONS,
} from '../../contract/webchat/index.ts';
import type { ChatKeySession, ChatSession } from '../../domain/chat/chat.ts';
import type { WebchatVisitor } from '../../domain/webchat/webchat.ts';
import { implement } from '../operation.ts';
import { webchatConversationHandlers } from './conversations.ts';
import { webchatMessageHandlers, webchatTurnHandlers } from './messages.ts';
import { webchatSiteHandlers, webchatUserHandlers, webchatVisitorHandlers } from './users.ts';

// The webchat API's tables (contract/webchat/index.ts) bound to the domain, for the actor of each.

export const WEBCHAT_VISITOR_HANDLERS = implement<WebchatVisitor>()(
  WEBCHAT_VISITOR_OPERATIONS,
  webchatVisitorHandlers,
);

export const WEBCHAT_SITE_HANDLERS = implement<WebchatVisitor>()(
  WEBCHAT_SITE_OPERATIONS,
  webchatSiteHandlers,
);

export const WEBCHAT_USER_HANDLERS = implement<ChatSession>()(WEBCHAT_USER_OPERATIONS, {
  ...webchatUserHandlers,
  ...webchatConversationHandlers,
  ...webchatMessageHandlers,
});

export const WEBCHAT_TURN_HANDLERS = implement<ChatKeySession>()(
  WEBCHAT_TURN_OPERATIONS,
  webchatTurnHandlers,
);
