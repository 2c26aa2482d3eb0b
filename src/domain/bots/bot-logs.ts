import { sql } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { invalidPayload } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { Keyset } from '../shared/pagination.ts';
import type { Page } from '../shared/pagination.ts';
import { requireRole } from '../workspace/roles.ts';
import { nowIso } from '../shared/time.ts';
import { BotLogBuffer } from './bot-log-buffer.ts';
import type { BotLogProblem, BotLogRow } from './bot-log-buffer.ts';
import { LOG_PAGE_SIZE } from './schemas.ts';
import type { BotLog, BotLogCall } from './schemas.ts';
import { BOT_LOG_LEVELS } from '../../value-sets.ts';
import type { BotLogLevel } from '../../value-sets.ts';

export const LOG_LEVELS = BOT_LOG_LEVELS;
export type { BotLogLevel };

function isLevel(value: string): value is BotLogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Longer messages are cut to this many characters (the last one an ellipsis). */
export const LOG_MESSAGE_MAX = 4000;
/** Rows per INSERT statement: well under the bound-parameter limits of SQLite and Postgres. */
const INSERT_CHUNK = 1000;

/** What the bot runtime hands over: a line of bot code's console/logger, or the engine's own about a bot. */
export interface BotLogEntry {
  level: BotLogLevel;
  message: string;
  /** When it was logged (anything `Date` parses); default: now. */
  timestamp?: string;
  conversationId?: string;
  userId?: string;
  workflowId?: string;
  /** The event whose turn logged it. */
  eventId?: string;
  /** The line tells of a model or tool call of the turn. */
  call?: BotLogCall;
}

export interface BotLogsQuery {
  /** Start of the window, inclusive. */
  timeStart: string;
  /** End of the window, inclusive; default: now. */
  timeEnd?: string;
  /** Only lines of exactly this level (as the hosted API: `warn` does not include `error`). */
  level?: string;
  conversationId?: string;
  userId?: string;
  workflowId?: string;
  /** Only lines whose message contains this text (case-sensitive). */
  messageContains?: string;
  nextToken?: string;
}

/** Oldest first; ties (same millisecond) in the order they were written, since ids are monotonic ULIDs. */
const keyset = new Keyset('bot_logs.timestamp', 'asc', 'bot_logs.id');

function isoOf(value: string, name: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidPayload(`${name} must be an ISO 8601 date-time, got "${value}"`);
  return new Date(ms).toISOString();
}

function capped(message: string): string {
  if (message.length <= LOG_MESSAGE_MAX) return message;
  let head = message.slice(0, LOG_MESSAGE_MAX - 1);
  // Do not leave half of a surrogate pair at the cut.
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
  return `${head}…`;
}

/** Rows of `entries`, each message capped at LOG_MESSAGE_MAX characters; a bad level is the caller's error. */
function rowsOf(botId: string, entries: readonly BotLogEntry[]): BotLogRow[] {
  const now = nowIso();
  return entries.map((e) => {
    if (!isLevel(e.level)) {
      throw invalidPayload(`A log level is one of ${LOG_LEVELS.join(', ')}, got "${String(e.level)}"`);
    }
    return {
      id: newId('botLog'),
      bot_id: botId,
      timestamp: e.timestamp === undefined ? now : isoOf(e.timestamp, 'timestamp'),
      level: e.level,
      message: capped(String(e.message)),
      conversation_id: e.conversationId ?? null,
      user_id: e.userId ?? null,
      workflow_id: e.workflowId ?? null,
      event_id: e.eventId ?? null,
      call_kind: e.call?.kind ?? null,
      call_ms: e.call === undefined ? null : Math.max(0, Math.round(e.call.durationMs)),
    };
  });
}

function logView(r: Row<'bot_logs'>): BotLog {
  return {
    timestamp: r.timestamp,
    level: r.level,
    message: r.message,
    ...(r.workflow_id !== null && { workflowId: r.workflow_id }),
    ...(r.user_id !== null && { userId: r.user_id }),
    ...(r.conversation_id !== null && { conversationId: r.conversation_id }),
    ...(r.event_id !== null && { eventId: r.event_id }),
    ...(r.call_kind !== null && { call: { kind: r.call_kind, durationMs: Number(r.call_ms ?? 0) } }),
  };
}

/** Bot logs: written by the bot runtime, read through getBotLogs and `parley logs`. */
export class BotLogs {
  private readonly buffer: BotLogBuffer;

  constructor(
    private readonly store: Store,
    /** Told of lines the store did not take at once (see BotLogBuffer). */
    report: (problem: BotLogProblem) => void,
  ) {
    this.buffer = new BotLogBuffer(
      {
        insert: (rows) => this.insert(rows),
        botExists: async (botId) =>
          (await this.store.db.selectFrom('bots').select('id').where('id', '=', botId).executeTakeFirst()) !==
          undefined,
      },
      report,
    );
  }

  /**
   * Lines of bot code (or of the engine about a bot), written within a second with others in a batch
   * (see BotLogBuffer): what the runtime logs on the hot path.
   */
  append(botId: string, entries: readonly BotLogEntry[]): void {
    this.buffer.add(rowsOf(botId, entries));
  }

  /**
   * Stores lines now, with one INSERT (chunked, in one transaction, past 1,000 lines). The bot must
   * exist (a deleted bot's lines fail on the foreign key).
   */
  async write(botId: string, entries: readonly BotLogEntry[]): Promise<void> {
    await this.insert(rowsOf(botId, entries));
  }

  /** Writes the lines that wait; what the store refuses then is reported lost. */
  close(): Promise<void> {
    return this.buffer.close();
  }

  private async insert(rows: readonly BotLogRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (rows.length <= INSERT_CHUNK) {
      await this.store.db.insertInto('bot_logs').values(rows).execute();
      return;
    }
    await this.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await trx
          .insertInto('bot_logs')
          .values(rows.slice(i, i + INSERT_CHUNK))
          .execute();
      }
    });
  }

  /** A bot's lines in a time window, oldest first, LOG_PAGE_SIZE a page. */
  async list(actor: WorkspaceActor, botId: string, query: BotLogsQuery): Promise<Page<BotLog>> {
    requireRole(actor.role, 'read');
    await requireBotOfWorkspace(this.store.db, actor, botId);
    // Every line this process logged before the read is in it.
    await this.buffer.flush();

    const timeStart = isoOf(query.timeStart, 'timeStart');
    const timeEnd = query.timeEnd === undefined ? nowIso() : isoOf(query.timeEnd, 'timeEnd');
    const cursor = keyset.decode(query.nextToken);
    let select = this.store.db
      .selectFrom('bot_logs')
      .selectAll()
      .where('bot_id', '=', botId)
      .where('timestamp', '>=', timeStart)
      .where('timestamp', '<=', timeEnd);
    if (query.level !== undefined) {
      // A level that is none of the four matches no line.
      if (!isLevel(query.level)) return { items: [] };
      select = select.where('level', '=', query.level);
    }
    if (query.conversationId !== undefined)
      select = select.where('conversation_id', '=', query.conversationId);
    if (query.userId !== undefined) select = select.where('user_id', '=', query.userId);
    if (query.workflowId !== undefined) select = select.where('workflow_id', '=', query.workflowId);
    if (query.messageContains !== undefined && query.messageContains !== '') {
      // A plain substring test, case-sensitive on both stores: no LIKE wildcards to escape, and no
      // difference between SQLite's ASCII-only case folding and Postgres'.
      const needle = query.messageContains;
      select = select.where(this.store.sql.contains(sql.ref('message'), needle));
    }
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('bot_logs.timestamp', 'asc')
      .orderBy('bot_logs.id', 'asc')
      .limit(LOG_PAGE_SIZE + 1)
      .execute();
    const page = keyset.page(rows, LOG_PAGE_SIZE, (r) => [r.timestamp, r.id]);
    return {
      items: page.items.map(logView),
      ...(page.nextToken !== undefined && { nextToken: page.nextToken }),
    };
  }

  /**
   * The lines the turns of these events logged, oldest first, every line this process logged before
   * included: what the test panel shows of each turn (the caller checked the actor may see the bot).
   */
  async ofEvents(botId: string, eventIds: readonly string[]): Promise<BotLog[]> {
    if (eventIds.length === 0) return [];
    await this.buffer.flush();
    const rows = await this.store.db
      .selectFrom('bot_logs')
      .selectAll()
      .where('bot_id', '=', botId)
      .where('event_id', 'in', eventIds)
      .orderBy('bot_logs.timestamp', 'asc')
      .orderBy('bot_logs.id', 'asc')
      .execute();
    return rows.map(logView);
  }

  /** Deletes every bot's lines logged before `date`; returns how many went. Retention is the caller's. */
  async pruneOlderThan(date: Date | string): Promise<number> {
    const before = typeof date === 'string' ? isoOf(date, 'date') : date.toISOString();
    const result = await this.store.db
      .deleteFrom('bot_logs')
      .where('timestamp', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Keeps each bot's newest `maxLines` lines and deletes the older ones; returns how many went. */
  async pruneBeyond(maxLines: number): Promise<number> {
    const { rows: crowded } = await sql<{ bot_id: string }>`select bot_id from bot_logs
      group by bot_id having count(*) > ${maxLines}`.execute(this.store.db);
    let deleted = 0;
    for (const { bot_id: botId } of crowded) {
      // The oldest line kept: the lines before it go (those logged at the same instant stay with it).
      const oldestKept = await this.store.db
        .selectFrom('bot_logs')
        .select('timestamp')
        .where('bot_id', '=', botId)
        .orderBy('timestamp', 'desc')
        .limit(1)
        .offset(maxLines - 1)
        .executeTakeFirst();
      if (!oldestKept) continue;
      const result = await this.store.db
        .deleteFrom('bot_logs')
        .where('bot_id', '=', botId)
        .where('timestamp', '<', oldestKept.timestamp)
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
    return deleted;
  }
}
