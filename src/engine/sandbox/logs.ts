import { MAX_LOG_CHARS, MAX_LOG_LINES } from './limits.ts';
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

  add(level: string, message: string): void {
    if (this.dropped) return;
    if (this.lines.length >= MAX_LOG_LINES) {
      this.dropped = true;
      this.push('warn', `(log lines after the first ${MAX_LOG_LINES} of this call were dropped)`);
      return;
    }
    const text = message.length > MAX_LOG_CHARS ? `${message.slice(0, MAX_LOG_CHARS)}…` : message;
    this.push(LEVELS.has(level) ? (level as LogLine['level']) : 'info', text);
  }

  private push(level: LogLine['level'], message: string): void {
    this.lines.push({ level, message, time: new Date().toISOString() });
  }
}
