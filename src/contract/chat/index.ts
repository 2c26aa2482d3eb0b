import { chatConversationOperations } from './conversations.ts';
import { chatMessageOperations, chatTurnOperations } from './messages.ts';
import { chatUserOperations, chatVisitorOperations } from './users.ts';

/**
 * The Chat API operations a channel's visitor calls before having (or to get) a user: no user yet, or
 * a key that names one to create.
 */
export const CHAT_VISITOR_OPERATIONS = chatVisitorOperations;

/** The Chat API operations of an end user authenticated by `x-user-key`. */
export const CHAT_USER_OPERATIONS = [
  ...chatUserOperations,
  ...chatConversationOperations,
  ...chatMessageOperations,
] as const;

/** The Chat API operations of an end user that queue a turn: admission decides before the user is read. */
export const CHAT_TURN_OPERATIONS = chatTurnOperations;

/** The Chat API's stream, declared as an operation but routed by hand: see listen.ts. */
export { listenConversation } from './listen.ts';
