/**
 * Bot log lines written behind: bot code's `console` lines arrive with every turn and action call, and
 * a row and a commit for each of them cost more than the call that logged them. Lines wait here at most
 * FLUSH_MS (a batch sooner once BATCH_LINES are waiting), then go to the store in one insert. A line is
 * in its bot's logs within a second of being logged; a read of the logs in this process writes what
 * waits first, so it sees every line logged before it.
 *
 * Nothing goes silently: a batch the store refuses is written again, bot by bot, later (a bot that no
 * longer exists takes its lines with it); past MAX_WAITING_LINES the oldest lines are given up. Both
 * are reported. What waits when the process is killed is lost, as a log line still in a pipe would be.
 */
import type { Row } from '../../store/schema.ts';

/** How long a line waits for others before its batch is written. */
export const FLUSH_MS = 200;
/** A batch this large is written at once. */
export const BATCH_LINES = 1000;
/** Lines kept while the store refuses them; past this, the oldest are given up. */
export const MAX_WAITING_LINES = 20_000;
/** The longest wait between attempts while the store refuses the lines. */
const MAX_RETRY_MS = 5000;

export type BotLogRow = Row<'bot_logs'>;

/** What the buffer could not do at once, for the server's log. */
export type BotLogProblem =
  | { kind: 'retrying'; lines: number; retryMs: number; error: unknown }
  | { kind: 'lost'; botId: string; lines: number; reason: string };

export interface BotLogSink {
  /** Writes the rows, all or none. */
  insert(rows: readonly BotLogRow[]): Promise<void>;
  botExists(botId: string): Promise<boolean>;
}

export class BotLogBuffer {
  private waiting: BotLogRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private retryMs = FLUSH_MS;
  private closed = false;

  constructor(
    private readonly sink: BotLogSink,
    private readonly report: (problem: BotLogProblem) => void,
  ) {}

  add(rows: readonly BotLogRow[]): void {
    if (rows.length === 0) return;
    this.waiting.push(...rows);
    this.giveUpOverflow();
    if (this.closed || this.waiting.length >= BATCH_LINES) void this.flush();
    else this.schedule(FLUSH_MS);
  }

  /** Writes every line added before the call; resolves when they are stored (or reported). */
  async flush(): Promise<void> {
    // A write under way may have taken only part of what is waiting now.
    while (this.writing) await this.writing;
    if (this.waiting.length === 0) return;
    this.writing = this.writeWaiting().finally(() => (this.writing = undefined));
    await this.writing;
  }

  /** Writes what waits; what the store still refuses then is reported lost. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.flush();
    for (const [botId, rows] of byBot(this.waiting)) {
      this.report({ kind: 'lost', botId, lines: rows.length, reason: 'the store refused them at shutdown' });
    }
    this.waiting = [];
  }

  private schedule(ms: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
    // The close writes what waits: a timer must not keep a process alive that is otherwise done.
    this.timer.unref();
  }

  private async writeWaiting(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    try {
      await this.sink.insert(batch);
      this.retryMs = FLUSH_MS;
      return;
    } catch {
      // One bot's lines can fail the batch (a bot deleted since): the others are written without them.
    }
    const refused: BotLogRow[] = [];
    let lastError: unknown;
    for (const [botId, rows] of byBot(batch)) {
      try {
        await this.sink.insert(rows);
      } catch (error) {
        if (await this.sink.botExists(botId).catch(() => true)) {
          refused.push(...rows);
          lastError = error;
        } else this.report({ kind: 'lost', botId, lines: rows.length, reason: 'the bot no longer exists' });
      }
    }
    if (refused.length === 0) {
      this.retryMs = FLUSH_MS;
      return;
    }
    // Lines logged meanwhile come after these: ids order them anyway, but the oldest go first on overflow.
    this.waiting = [...refused, ...this.waiting];
    this.giveUpOverflow();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.report({ kind: 'retrying', lines: refused.length, retryMs: this.retryMs, error: lastError });
    this.schedule(this.retryMs);
  }

  private giveUpOverflow(): void {
    const excess = this.waiting.length - MAX_WAITING_LINES;
    if (excess <= 0) return;
    for (const [botId, rows] of byBot(this.waiting.slice(0, excess))) {
      this.report({ kind: 'lost', botId, lines: rows.length, reason: 'too many lines waited for the store' });
    }
    this.waiting = this.waiting.slice(excess);
  }
}

function byBot(rows: readonly BotLogRow[]): Map<string, BotLogRow[]> {
  const groups = new Map<string, BotLogRow[]>();
  for (const row of rows) {
    const group = groups.get(row.bot_id);
    if (group) group.push(row);
    else groups.set(row.bot_id, [row]);
  }
  return groups;
}
