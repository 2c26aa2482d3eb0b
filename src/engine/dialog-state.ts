import type { TriggerInfo } from './event-object.ts';

/** A running workflow: where it stands, and the runtime workflow record that holds its variables. */
export interface Frame {
  workflow: string;
  node: string;
  /** The next card to run in the node; past the last card, the node transitions. */
  card: number;
  recordId: string;
}

/**
 * A conversation's dialog context, stored (as a conversation state) after every card, so that a turn
 * interrupted by a crash resumes where it stood instead of starting over.
 */
export interface DialogState {
  /** The workflow call stack: `main` (or a triggered workflow) first; empty when no dialog runs. */
  frames: Frame[];
  /** Set while the capture card at the top frame's position waits for the user's next message. */
  waiting?: { attempts: number };
  /** The conversation has had a dialog before (so `conversation_started` triggers no more). */
  started: boolean;
  /** The event whose turn is running: a resumed turn continues it, and replies keep their numbers. */
  turn?: { eventId: string; replies: number; running: boolean };
  trigger?: TriggerInfo;
  /**
   * Workflow runs stored as Runtime API workflow records. A run gets its record when its `workflow`
   * variables are first stored, so a workflow without variables costs no record.
   */
  recorded?: string[];
}

export const DIALOG_STATE = 'parley:dialog';
export const VARIABLES_STATE = 'variables';

export function emptyDialog(): DialogState {
  return { frames: [], started: false };
}
