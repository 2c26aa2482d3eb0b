import { Type } from 'typebox';
import type { Static } from 'typebox';
import { JsonObject, Timestamp } from '../shared/schemas.ts';
import { ChatPayloadSchema } from '../chat/payloads.ts';
import { HANDOFF_ACTIONS, HANDOFF_SOURCES, HANDOFF_STATUSES } from '../../value-sets.ts';

// Human handoffs as the Admin API answers them, and what changes them: a module without the store, so
// the contract declares the Admin API with them.

/**
 * The events a handoff queues for its bot, in its conversation: the bot's hooks see them, a Parley bot
 * resumes on the last two, and outgoing webhook subscriptions receive them by these types.
 */
export const HANDOFF_EVENT_TYPES = {
  started: 'handoff.started',
  assigned: 'handoff.assigned',
  resolved: 'handoff.resolved',
  timedOut: 'handoff.timed_out',
} as const;

/** The longest a handoff may wait for an agent before it times out: a week. */
export const MAX_HANDOFF_TIMEOUT_SECONDS = 7 * 24 * 3600;

const NodeName = Type.String({ description: 'A node of the workflow of the card that opened the handoff' });

export const HandoffAgentSchema = Type.Object({
  accountId: Type.String({ description: 'The agent’s account: a member of the bot’s workspace' }),
  userId: Type.String({
    description: 'The bot’s user that stands for the agent: the `userId` of the agent’s messages',
  }),
  name: Type.String({
    description: 'The name the visitor sees: the member’s display name, else their email',
  }),
});
export type HandoffAgent = Static<typeof HandoffAgentSchema>;

export const HandoffSchema = Type.Object({
  id: Type.String(),
  botId: Type.String(),
  conversationId: Type.String(),
  userId: Type.Optional(Type.String({ description: 'The visitor the bot handed over' })),
  reason: Type.String(),
  team: Type.Optional(Type.String({ description: 'The team or tag it is routed to' })),
  source: Type.Enum(HANDOFF_SOURCES, {
    description: '`card`: a Parley bot’s handoff card; `hitl`: an SDK bot’s call of `hitl:startHitl`',
  }),
  status: Type.Enum(HANDOFF_STATUSES, {
    description:
      '`pending`: waiting for an agent; `assigned`: an agent has it; `resolved`: closed by the agent or the bot; `timed_out`: no agent took it in time',
  }),
  agent: Type.Optional(HandoffAgentSchema),
  assignedAt: Type.Optional(Timestamp),
  timeoutAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'When it times out if no agent has taken it (ISO 8601, UTC)',
    }),
  ),
  onResolved: Type.Optional(NodeName),
  onTimeout: Type.Optional(NodeName),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  resolvedAt: Type.Optional(Timestamp),
  timedOutAt: Type.Optional(Timestamp),
  hitlConversationId: Type.Optional(
    Type.String({
      description:
        'A `hitl` handoff’s agent-side conversation (the `hitl` channel’s): the agents’ messages reach the bot there, and the bot copies the visitor’s there',
    }),
  ),
});
export type Handoff = Static<typeof HandoffSchema>;

export const HandoffEventSchema = Type.Object({
  id: Type.String(),
  action: Type.Enum(HANDOFF_ACTIONS),
  accountId: Type.Optional(
    Type.String({ description: 'The member who did it; absent: the bot or the timeout' }),
  ),
  detail: JsonObject,
  createdAt: Timestamp,
});
export type HandoffEvent = Static<typeof HandoffEventSchema>;

export const ListHandoffsQuerySchema = Type.Object({
  status: Type.Optional(Type.Enum(HANDOFF_STATUSES, { description: 'Only the handoffs in this status' })),
});
export type ListHandoffsQuery = Static<typeof ListHandoffsQuerySchema>;

export const AssignHandoffBodySchema = Type.Object({
  agentId: Type.Optional(
    Type.String({
      description:
        'The account of the member to give it to (a transfer); default: yours. They must be allowed to answer handoffs',
    }),
  ),
});
export type AssignHandoffBody = Static<typeof AssignHandoffBodySchema>;

export const HandoffMessageBodySchema = Type.Object({
  payload: ChatPayloadSchema,
  metadata: Type.Optional(JsonObject),
});
export type HandoffMessageBody = Static<typeof HandoffMessageBodySchema>;

/** What opens a handoff: the card or the integration that asks for it, in a conversation of the bot. */
export interface OpenHandoff {
  conversationId: string;
  userId?: string;
  reason: string;
  team?: string;
  source: Static<typeof HandoffSchema.properties.source>;
  timeoutSeconds?: number;
  onResolved?: string;
  onTimeout?: string;
  /** The agent-side conversation the `hitl` integration made for it. */
  hitlConversationId?: string;
}
