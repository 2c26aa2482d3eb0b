// Following a bot's logs as `parley logs --follow` does: each poll reads the window from a little before
// the newest line held (lines can be stored after newer ones), and keeps only the lines it had not got.
import { admin } from './api/admin.ts';
import type { BotLog } from './api/types.ts';

/** How far before the newest line held each poll looks again (as the CLI's --follow). */
export const LOOKBACK_MS = 10_000;
/** At most this many lines are kept; the oldest go first. */
export const MAX_LINES = 2000;

export interface LogFilters {
  level?: string;
  messageContains?: string;
  conversationId?: string;
}

export class LogTail {
  lines: BotLog[] = [];
  private readonly held = new Map<string, number>();
  private windowStart: string;

  constructor(
    private readonly botId: string,
    since: string,
    private readonly filters: LogFilters = {},
  ) {
    this.windowStart = since;
  }

  /** Reads the window to now; answers whether new lines came. */
  async poll(signal?: AbortSignal): Promise<boolean> {
    const seen = new Map<string, number>();
    const fresh: BotLog[] = [];
    let nextToken: string | undefined;
    do {
      const page = await admin.getBotLogs(
        this.botId,
        {
          timeStart: this.windowStart,
          ...(this.filters.level && { level: this.filters.level }),
          ...(this.filters.messageContains && { messageContains: this.filters.messageContains }),
          ...(this.filters.conversationId && { conversationId: this.filters.conversationId }),
          ...(nextToken && { nextToken }),
        },
        signal,
      );
      for (const line of page.logs) {
        // Lines have no id: one is known by all its fields, and identical lines by how many were seen.
        const key = JSON.stringify([
          line.timestamp,
          line.level,
          line.message,
          line.conversationId,
          line.userId,
          line.workflowId,
        ]);
        const n = (seen.get(key) ?? 0) + 1;
        seen.set(key, n);
        if ((this.held.get(key) ?? 0) >= n) continue;
        this.held.set(key, n);
        fresh.push(line);
      }
      nextToken = page.nextToken;
    } while (nextToken);
    if (fresh.length === 0) return false;
    this.lines = [...this.lines, ...fresh]
      .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0))
      .slice(-MAX_LINES);
    const newest = this.lines[this.lines.length - 1]?.timestamp;
    if (newest) {
      const lookback = new Date(Date.parse(newest) - LOOKBACK_MS).toISOString();
      if (lookback > this.windowStart) {
        this.windowStart = lookback;
        for (const key of this.held.keys())
          if (String((JSON.parse(key) as unknown[])[0]) < lookback) this.held.delete(key);
      }
    }
    return true;
  }
}
