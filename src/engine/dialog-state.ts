import { Type } from 'typebox';
import type { Static } from 'typebox';
import { compiledOnFirstUse } from '../domain/shared/json-schema.ts';
import { EventKbSchema } from './event-object.ts';
import { JsonObject } from '../domain/shared/schemas.ts';

const FrameSchema = Type.Object({
  workflow: Type.String(),
  node: Type.String(),
  /** The next card to run in the node; past the last card, the node transitions. */
  card: Type.Integer({ minimum: 0 }),
  /** The runtime workflow record that holds its variables. */
  recordId: Type.String(),
});
/** A running workflow: where it stands, and the runtime workflow record that holds its variables. */
export type Frame = Static<typeof FrameSchema>;

const TriggerSchema = Type.Object({
  flowId: Type.String(),
  nodeId: Type.String(),
  eventName: Type.Optional(Type.String()),
});

/**
 * The loop of an autonomous card: its messages as the model is given them, written after each model
 * answer and each tool result, so that a turn tried again goes on from there instead of calling a tool
 * (or sending a reply) again.
 */
const AutonomousStateSchema = Type.Object({
  /** The card it belongs to: its workflow run, node and place in the node. */
  recordId: Type.String(),
  node: Type.String(),
  card: Type.Integer({ minimum: 0 }),
  /** The conversation so far, in the Cognitive API's messages (tool calls and results included). */
  messages: Type.Array(JsonObject),
  /** The turn the counts are of: the next turn counts from 0 again. */
  eventId: Type.String(),
  /** Model calls made, and tokens they used (input and output), in that turn. */
  calls: Type.Integer({ minimum: 0 }),
  tokens: Type.Integer({ minimum: 0 }),
  /** It waits for the user's next message, which goes on with the loop. */
  waiting: Type.Boolean(),
});
export type AutonomousState = Static<typeof AutonomousStateSchema>;

/**
 * A conversation's dialog context, checkpointed (as a conversation state) after every card, so that a
 * turn interrupted by a crash resumes where it stood instead of starting over.
 */
const DialogStateSchema = Type.Object({
  /** The workflow call stack: `main` (or a triggered workflow) first; empty when no dialog runs. */
  frames: Type.Array(FrameSchema),
  /** Set while the capture card at the top frame's position waits for the user's next message. */
  waiting: Type.Optional(Type.Object({ attempts: Type.Integer({ minimum: 0 }) })),
  /** The conversation has had a dialog before (so `conversation_started` triggers no more). */
  started: Type.Boolean(),
  /** The event whose turn is running: a resumed turn continues it, and replies keep their numbers. */
  turn: Type.Optional(
    Type.Object({
      eventId: Type.String(),
      replies: Type.Integer({ minimum: 0 }),
      running: Type.Boolean(),
      /** What the turn's knowledge cards found (`event.kb`), for a resumed turn. */
      kb: Type.Optional(EventKbSchema),
    }),
  ),
  trigger: Type.Optional(TriggerSchema),
  /**
   * Workflow runs stored as Runtime API workflow records. A run gets its record when its `workflow`
   * variables are first stored, so a workflow without variables costs no record.
   */
  recorded: Type.Optional(Type.Array(Type.String())),
  /** The loop of the autonomous card the dialog stands at, if it stands at one. */
  autonomous: Type.Optional(AutonomousStateSchema),
  /**
   * The handoff the handoff card at the top frame's position opened: until it closes, the user's
   * messages are the agent's, and its close (the `handoff.resolved` or `handoff.timed_out` event of
   * this id) moves the dialog on.
   */
  handoff: Type.Optional(Type.Object({ id: Type.String() })),
});
export type DialogState = Static<typeof DialogStateSchema>;

/** Whether a stored document is a dialog state (one of another shape starts a new dialog). */
export const isDialogState = compiledOnFirstUse<DialogState>(DialogStateSchema);

export const DIALOG_STATE = 'parley:dialog';
export const VARIABLES_STATE = 'variables';

export function emptyDialog(): DialogState {
  return { frames: [], started: false };
}
