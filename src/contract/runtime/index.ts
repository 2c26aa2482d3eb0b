import { actionOperations } from './actions.ts';
import { analyticsOperations } from './analytics.ts';
import { conversationOperations } from './conversations.ts';
import { eventOperations } from './events.ts';
import { integrationOperations } from './integrations.ts';
import { messageOperations } from './messages.ts';
import { stateOperations } from './states.ts';
import { tagOperations } from './tags.ts';
import { userOperations } from './users.ts';
import { workflowOperations } from './workflows.ts';

/**
 * The Runtime API (`/v1/chat`), every operation declared once: its HTTP routes and the `client` that
 * bot code gets are both generated from this table.
 */
export const RUNTIME_OPERATIONS = [
  ...actionOperations,
  ...conversationOperations,
  ...userOperations,
  ...messageOperations,
  ...eventOperations,
  ...stateOperations,
  ...workflowOperations,
  ...tagOperations,
  ...analyticsOperations,
  ...integrationOperations,
] as const;
