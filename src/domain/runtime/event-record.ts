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
