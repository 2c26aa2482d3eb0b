import type { Executor, Store } from '../../store/index.ts';
import { everyKey, prepare } from '../../store/prepared.ts';
import type { Row } from '../../store/schema.ts';
import { eventPayloadForChat, messageForChat } from '../chat/bot-format.ts';
import type { ForeignIds } from '../chat/foreign-ids.ts';
import type { JsonObject } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';

/**
 * Something that happened in a conversation, as its live listeners see it (the chat wire format),
 * but with Parley's ids: recording translates them to the ids the Chat API's clients know.
 */
export type LiveSignal =
  | {
      type: 'message_created';
      /** In the bot's format: `bot-format.ts` gives the chat's. */
      message: { id: string; createdAt: string; type: string; payload: JsonObject; userId: string };
      isBot: boolean;
    }
  | { type: 'message_deleted'; messageId: string; userId: string }
  | {
      type: 'event_created';
      /** As the bot stored it (`type` undefined: one the bot sent, shown as is). */
      event: { id: string | null; createdAt: string; type?: string; payload: JsonObject; userId: string };
      isBot: boolean;
    }
  | { type: 'participant_added' | 'participant_removed'; userId: string };

/** A recorded signal: its place in the conversation's sequence and its SSE `data:` line. */
export interface RecordedSignal {
  conversationId: string;
  seq: number;
  frame: string;
  /** For `participant_removed`: the user (Parley's id) whose streams of the conversation end with it. */
  removedUserId?: string;
}

/** Carries recorded signals to every process's listeners, in order per conversation. */
export interface LiveBus {
  publish(signal: RecordedSignal): void;
  subscribe(conversationId: string, handler: (signal: RecordedSignal) => void): () => void;
  close(): Promise<void>;
}

/** Signals read from the log at once when a listener catches up (it reads page after page). */
export const BACKLOG_PAGE = 500;

/**
 * Each conversation's live signals, numbered without gaps. A signal is recorded in the transaction of
 * the change it reports (the conversation row's counter serialises concurrent writers, so numbers follow
 * commit order) and published after the commit; listeners deliver in number order and fetch any number
 * they missed from here.
 */
const insertSignal = prepare(
  everyKey<Row<'conversation_signals'>>()(['conversation_id', 'seq', 'frame', 'created_at']),
  (db, row: Row<'conversation_signals'>) => db.insertInto('conversation_signals').values(row),
);

/** A signal stored under `seq` with its frame, as `publish` takes it. */
export function recorded(
  conversationId: string,
  seq: number,
  frame: string,
  signal: LiveSignal,
): RecordedSignal {
  return {
    conversationId,
    seq,
    frame,
    ...(signal.type === 'participant_removed' && { removedUserId: signal.userId }),
  };
}

export class ConversationLog {
  constructor(
    private readonly store: Store,
    private readonly ids: ForeignIds,
    readonly bus: LiveBus,
  ) {}

  async record(db: Executor, conversationId: string, signal: LiveSignal): Promise<RecordedSignal> {
    const counter = await db
      .updateTable('conversations')
      .set((eb) => ({ signal_seq: eb('signal_seq', '+', 1) }))
      .where('id', '=', conversationId)
      .returning('signal_seq')
      .executeTakeFirstOrThrow();
    return this.recordAt(db, conversationId, Number(counter.signal_seq), signal);
  }

  /**
   * Records a signal under a number the caller took itself, by advancing the conversation's `signal_seq`
   * in the same transaction (in a statement that changed the conversation anyway, saving one).
   */
  async recordAt(
    db: Executor,
    conversationId: string,
    seq: number,
    signal: LiveSignal,
  ): Promise<RecordedSignal> {
    const frame = await this.frameOf(db, conversationId, signal);
    await insertSignal.execute(db, { conversation_id: conversationId, seq, frame, created_at: nowIso() });
    return recorded(conversationId, seq, frame, signal);
  }

  /** A signal's `data:` line, for a caller that stores it in a statement of its own (see `recorded`). */
  async frameOf(db: Executor, conversationId: string, signal: LiveSignal): Promise<string> {
    return JSON.stringify(await this.toWire(db, conversationId, signal));
  }

  /** After the commit of the change the signals report. */
  publish(signals: RecordedSignal[]): void {
    for (const signal of signals) this.bus.publish(signal);
  }

  async lastSeq(conversationId: string): Promise<number> {
    const row = await this.store.db
      .selectFrom('conversations')
      .select('signal_seq')
      .where('id', '=', conversationId)
      .executeTakeFirst();
    return Number(row?.signal_seq ?? 0);
  }

  /** Recorded signals after `afterSeq` up to `toSeq`, oldest first: a page of at most `limit`. */
  async since(
    conversationId: string,
    afterSeq: number,
    toSeq: number,
    limit = BACKLOG_PAGE,
  ): Promise<RecordedSignal[]> {
    const rows = await this.store.db
      .selectFrom('conversation_signals')
      .select(['seq', 'frame'])
      .where('conversation_id', '=', conversationId)
      .where('seq', '>', afterSeq)
      .where('seq', '<=', toSeq)
      .orderBy('seq', 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ conversationId, seq: Number(r.seq), frame: r.frame }));
  }

  /** Deletes the signals recorded more than `retentionMs` ago: a listener resuming before them is told. */
  async prune(retentionMs: number, now = Date.now()): Promise<void> {
    await this.store.db
      .deleteFrom('conversation_signals')
      .where('created_at', '<', new Date(now - retentionMs).toISOString())
      .execute();
  }

  private async toWire(db: Executor, conversationId: string, signal: LiveSignal): Promise<object> {
    const foreign = await this.ids.foreignOfMany(db, [conversationId, ...userIdsOf(signal)]);
    const f = (id: string) => foreign.get(id) ?? id;
    const conversation = f(conversationId);
    switch (signal.type) {
      case 'message_created': {
        const { id, createdAt, type, payload, userId } = signal.message;
        return {
          type: signal.type,
          data: {
            id,
            createdAt,
            ...messageForChat({ type, payload }),
            userId: f(userId),
            conversationId: conversation,
            isBot: signal.isBot,
          },
        };
      }
      case 'message_deleted':
        return {
          type: signal.type,
          data: { id: signal.messageId, conversationId: conversation, userId: f(signal.userId) },
        };
      case 'event_created': {
        const { id, createdAt, type, payload, userId } = signal.event;
        return {
          type: signal.type,
          data: {
            id,
            createdAt,
            payload: type === undefined ? payload : eventPayloadForChat(type, payload),
            userId: f(userId),
            conversationId: conversation,
            isBot: signal.isBot,
          },
        };
      }
      case 'participant_added':
      case 'participant_removed':
        return { type: signal.type, data: { conversationId: conversation, participantId: f(signal.userId) } };
    }
  }
}

function userIdsOf(signal: LiveSignal): string[] {
  switch (signal.type) {
    case 'message_created':
      return [signal.message.userId];
    case 'event_created':
      return [signal.event.userId];
    default:
      return [signal.userId];
  }
}

/** One recorded signal, read back from the store (for buses that carry references to large frames). */
export async function loadSignal(
  store: Store,
  conversationId: string,
  seq: number,
): Promise<RecordedSignal | undefined> {
  const row = await store.db
    .selectFrom('conversation_signals')
    .select('frame')
    .where('conversation_id', '=', conversationId)
    .where('seq', '=', seq)
    .executeTakeFirst();
  if (!row) return undefined;
  const parsed = JSON.parse(row.frame) as { type: string; data: { participantId?: string } };
  const signal: RecordedSignal = { conversationId, seq, frame: row.frame };
  if (parsed.type === 'participant_removed' && parsed.data.participantId) {
    // The frame carries the chat's id of the user; streams compare Parley's.
    const mapped = await store.db
      .selectFrom('chat_ids')
      .select('internal_id')
      .where('foreign_id', '=', parsed.data.participantId)
      .where('kind', '=', 'user')
      .executeTakeFirst();
    signal.removedUserId = mapped?.internal_id ?? parsed.data.participantId;
  }
  return signal;
}
