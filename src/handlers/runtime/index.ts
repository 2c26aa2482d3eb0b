import type { BotActor } from '../../domain/workspace/actors.ts';
import { RUNTIME_OPERATIONS } from '../../contract/runtime/index.ts';
import { implement } from '../operation.ts';
import { actionHandlers } from './actions.ts';
import { analyticsHandlers } from './analytics.ts';
import { conversationHandlers } from './conversations.ts';
import { eventHandlers } from './events.ts';
import { integrationHandlers } from './integrations.ts';
import { messageHandlers } from './messages.ts';
import { stateHandlers } from './states.ts';
import { tagHandlers } from './tags.ts';
import { userHandlers } from './users.ts';
import { workflowHandlers } from './workflows.ts';

/** The Runtime API's operations bound to the domain, as its routes and bot code's client run them. */
export const RUNTIME_HANDLERS = implement<BotActor>()(RUNTIME_OPERATIONS, {
  ...actionHandlers,
  ...analyticsHandlers,
  ...conversationHandlers,
  ...eventHandlers,
  ...integrationHandlers,
  ...messageHandlers,
  ...stateHandlers,
  ...tagHandlers,
  ...userHandlers,
  ...workflowHandlers,
});
