import { everyKey } from '../../store/prepared.ts';
import type { Row } from '../../store/schema.ts';
import { fromJson } from '../shared/json.ts';
import type { JsonObject } from '../shared/schemas.ts';
import type { Event } from './schemas.ts';

/**
 * An event as it is read from its row (its schema is the Runtime API's, schemas.ts): what the durable
 * queue (queue/event-queue.ts) claims and the bot's events (events.ts) queue and list, below both.
 */

/** An event's row as its insert writes it: its workspace is its bot's, which the insert reads (`workspaceOf`). */
export type NewEventRow = Omit<Row<'events'>, 'workspace_id'>;

/** A new event's row but its claim (which an insert that claims it decides). */
export type UnclaimedEventRow = Omit<NewEventRow, 'lease_owner' | 'lease_until' | 'deliveries'>;

/** The columns of `UnclaimedEventRow`, each once. */
export const UNCLAIMED_EVENT_COLUMNS = everyKey<UnclaimedEventRow>()([
  'id',
  'bot_id',
  'type',
  'payload',
  'conversation_id',
  'user_id',
  'message_id',
  'workflow_id',
  'status',
  'failure_reason',
  'scheduled_for',
  'attempts',
  'created_at',
  'updated_at',
]);

/** The columns of `NewEventRow`, each once: the arguments of a prepared insert of whole rows. */
export const NEW_EVENT_COLUMNS = everyKey<NewEventRow>()([
  ...UNCLAIMED_EVENT_COLUMNS,
  'lease_owner',
  'lease_until',
  'deliveries',
]);

export function toEvent(row: NewEventRow): Event {
  return {
    id: row.id,
    createdAt: row.created_at,
    type: row.type,
    payload: fromJson<JsonObject>(row.payload),
    ...(row.conversation_id !== null && { conversationId: row.conversation_id }),
    ...(row.user_id !== null && { userId: row.user_id }),
    ...(row.message_id !== null && { messageId: row.message_id }),
    status: row.status,
    failureReason: row.failure_reason,
  };
}
