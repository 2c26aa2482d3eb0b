import { MAX_LOG_CHARS, MAX_LOG_CHARS_PER_CALL, MAX_LOG_LINES } from './limits.ts';
import type { LogLine } from './types.ts';

const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

/**
 * The console lines of one call. They are collected in the sandbox process as the code prints them
 * (not returned at the end), so a call that times out or runs out of memory keeps what it printed.
 * The isolate caps lines too; the cap here is the one that counts.
 */
export class LogCollector {
  readonly lines: LogLine[] = [];
  private dropped = false;
  private chars = 0;

  add(level: string, message: string): void {
    if (this.dropped) return;
    if (this.lines.length >= MAX_LOG_LINES || this.chars >= MAX_LOG_CHARS_PER_CALL) {
      this.dropped = true;
      this.push(
        'warn',
        `(the log lines of this call after the first ${this.lines.length} (${this.chars} characters) were dropped: at most ${MAX_LOG_LINES} lines and ${MAX_LOG_CHARS_PER_CALL} characters are kept per call)`,
      );
      return;
    }
    const room = Math.min(MAX_LOG_CHARS, MAX_LOG_CHARS_PER_CALL - this.chars);
    const text = message.length > room ? `${message.slice(0, room)}…` : message;
    this.chars += text.length;
    this.push(LEVELS.has(level) ? (level as LogLine['level']) : 'info', text);
  }

  private push(level: LogLine['level'], message: string): void {
    this.lines.push({ level, message, time: new Date().toISOString() });
  }
}
