import type { ChatSession } from '../../domain/chat/chat.ts';
import type { WebchatVisitor } from '../../domain/webchat/webchat.ts';
import type {
  webchatVisitorOperations,
  webchatSiteOperations,
  webchatUserOperations,
} from '../../contract/webchat/users.ts';
import type { Handlers } from '../operation.ts';
import { sharedHandlers } from '../chat/shared.ts';

export const webchatVisitorHandlers = {
  createUser: (d, visitor, body) => d.webchat.createUser(visitor, body),
  sendPerfMetrics: async () => ({}),
} satisfies Handlers<WebchatVisitor, typeof webchatVisitorOperations>;

export const webchatSiteHandlers = {
  generateUserKey: async (d, visitor, { id, expiresAt }) => ({
    key: await d.webchat.generateUserKey(visitor, id, expiresAt),
  }),
} satisfies Handlers<WebchatVisitor, typeof webchatSiteOperations>;

export const webchatUserHandlers = {
  getUser: async (d, session) => ({ user: await d.webchat.getUser(session) }),
  updateUser: async (d, session, body) => ({ user: await d.webchat.updateUser(session, body) }),
  deleteUser: sharedHandlers.deleteUser,
} satisfies Handlers<ChatSession, typeof webchatUserOperations>;
