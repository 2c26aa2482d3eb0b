import { webchatConversationOperations } from './conversations.ts';
import { webchatMessageOperations, webchatTurnOperations } from './messages.ts';
import { webchatSiteOperations, webchatUserOperations, webchatVisitorOperations } from './users.ts';

/** The webchat API operations of a visitor (no user key needed). */
export const WEBCHAT_VISITOR_OPERATIONS = webchatVisitorOperations;

/** The webchat API operations of a site's backend, authenticated by `x-admin-secret`. */
export const WEBCHAT_SITE_OPERATIONS = webchatSiteOperations;

/** The webchat API operations of an end user authenticated by `x-user-key`. */
export const WEBCHAT_USER_OPERATIONS = [
  ...webchatUserOperations,
  ...webchatConversationOperations,
  ...webchatMessageOperations,
] as const;

/** The webchat API operations of an end user that queue a turn: admission decides before the user is read. */
export const WEBCHAT_TURN_OPERATIONS = webchatTurnOperations;
