import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What ties a turn's work to the event it answered, so a transcript groups each reply and each log
  // line with its turn rather than guessing by time (turns of one conversation overlap when its
  // messages come faster than the bot answers). Null for what no turn made (a user's message, a call
  // through the API, the lines of older versions).
  await db.schema.alterTable('messages').addColumn('event_id', 'text').execute();
  await db.schema.alterTable('bot_logs').addColumn('event_id', 'text').execute();
  // A line about a model or tool call of a turn (`call_kind`: model, tool) and how long it took: read
  // as data by the transcript, which folds them, rather than parsed from the line's text.
  await db.schema.alterTable('bot_logs').addColumn('call_kind', 'text').execute();
  await db.schema.alterTable('bot_logs').addColumn('call_ms', 'integer').execute();
}
