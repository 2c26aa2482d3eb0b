import { Type } from 'typebox';
import type { Static } from 'typebox';
import { MAX_HANDOFF_TIMEOUT_SECONDS } from './schemas.ts';

// The built-in `hitl` integration's names and its actions' schemas (the hosted `hitl` interface's), in a
// module without the store: the integration checks its inputs with them, and the handoffs queue its events.

/** Its alias on every bot, the name of its conversations' integration and channel. */
export const HITL_INTEGRATION = 'hitl';
/** The channel of the agent-side conversations it makes (the interface's `hitl` channel). */
export const HITL_CHANNEL = 'hitl';
/** The version of the hosted `hitl` interface whose actions, events and channel it implements. */
export const HITL_INTERFACE_VERSION = '2.1.0';

/** Its events, as a bot receives an integration's: prefixed with its alias. */
export const HITL_EVENT_TYPES = {
  assigned: `${HITL_INTEGRATION}:hitlAssigned`,
  stopped: `${HITL_INTEGRATION}:hitlStopped`,
} as const;

export const HITL_ACTIONS = ['createUser', 'startHitl', 'stopHitl'] as const;
export type HitlAction = (typeof HITL_ACTIONS)[number];

export const CreateUserInputSchema = Type.Object({
  name: Type.String({ description: 'Display name of the end user' }),
  pictureUrl: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
});
export type CreateUserInput = Static<typeof CreateUserInputSchema>;

/**
 * The interface's `hitlSession` entity, which each integration fills with its own settings: Parley's
 * are the handoff card's routing and timeout. Other fields are let through, as the entity allows.
 */
export const HitlSessionSchema = Type.Object({
  team: Type.Optional(Type.String({ description: 'The team or tag the handoff is routed to' })),
  timeoutSeconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_HANDOFF_TIMEOUT_SECONDS,
      description: 'Seconds an agent has to take it; none: it waits until someone does',
    }),
  ),
});

export const StartHitlInputSchema = Type.Object({
  userId: Type.String({
    description:
      'The end user: a user `createUser` made (linked to the visitor by its `upstream` tag, as the hitl plugin links them), or the visitor’s own',
  }),
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  hitlSession: Type.Optional(HitlSessionSchema),
  // Parley reads the visitor's conversation itself: the history the plugin sends is not needed.
  messageHistory: Type.Optional(Type.Array(Type.Object({}))),
});
export type StartHitlInput = Static<typeof StartHitlInputSchema>;

export const StopHitlInputSchema = Type.Object({
  conversationId: Type.String({ description: 'The hitl conversation `startHitl` answered' }),
});
export type StopHitlInput = Static<typeof StopHitlInputSchema>;
