import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { APIS, mountOf } from '../contract/apis.ts';
import { requestOf, specOf, targetOf as targetOfWire } from '../contract/client.ts';
import { HEADERS } from '../contract/headers.ts';
import { DEFAULT_URL } from './api.ts';
import { CliError } from './errors.ts';

const USAGE =
  'usage: parley logs <botId> [--follow] [--since <ISO date-time or duration: 30s, 10m, 2h, 1d>] ' +
  '[--level debug|info|warn|error] [--url URL] [--token TOKEN] [--workspace-id ID]';
const HELP = `${USAGE}

Prints a bot's log lines, oldest first, one a line: <timestamp> <LEVEL> [conversation <id>] <message>.
  --follow, -f       Keep printing new lines (polls every second) until Ctrl-C.
  --since            Where to start: an ISO date-time, or a duration back from now. Default: 1h.
  --level            Only lines of exactly this level.
  --url              The server (PARLEY_URL; default http://127.0.0.1:3000).
  --token            A personal access token of a member of the bot's workspace (PARLEY_TOKEN).
  --workspace-id     The bot's workspace (PARLEY_WORKSPACE_ID).
`;
const LEVELS = ['debug', 'info', 'warn', 'error'];
const DEFAULT_SINCE_MS = 60 * 60 * 1000;
const POLL_INTERVAL_MS = 1000;
/**
 * How far before the newest line printed `--follow` looks again on each poll. A line can be stored
 * after a newer one (the runtime writes in batches); one stamped more than this before the newest
 * line printed, arriving after it, is not shown.
 */
const LOOKBACK_MS = 10_000;
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  conversationId?: string;
  userId?: string;
  workflowId?: string;
}

interface LogsPage {
  logs: LogLine[];
  nextToken?: string;
}

interface Target {
  url: string;
  token: string;
  workspaceId: string;
  botId: string;
  level?: string;
}

/** An answer worth trying again later (network failure, 5xx, 429), as opposed to a mistake to report. */
class TransientError extends CliError {}

/** `parley logs <botId> [--follow]`: prints a bot's log lines through the Admin API (getBotLogs). */
export async function logsCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        follow: { type: 'boolean', short: 'f' },
        since: { type: 'string' },
        level: { type: 'string' },
        url: { type: 'string' },
        token: { type: 'string' },
        'workspace-id': { type: 'string' },
      },
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [botId, ...extra] = positionals;
  if (!botId || extra.length > 0) throw new CliError(USAGE);
  const token = values.token ?? env.PARLEY_TOKEN;
  if (!token) throw new CliError('a token is required: --token or PARLEY_TOKEN (a personal access token)');
  const workspaceId = values['workspace-id'] ?? env.PARLEY_WORKSPACE_ID;
  if (!workspaceId)
    throw new CliError('the bot’s workspace is required: --workspace-id or PARLEY_WORKSPACE_ID');
  const url = (values.url ?? env.PARLEY_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(url)) throw new CliError(`--url must be an http(s) URL, got "${url}"`);
  if (values.level !== undefined && !LEVELS.includes(values.level)) {
    throw new CliError(`--level must be one of ${LEVELS.join(', ')}`);
  }
  const since = sinceOf(values.since, Date.now());
  const target: Target = {
    url,
    token,
    workspaceId,
    botId,
    ...(values.level !== undefined && { level: values.level }),
  };
  return values.follow ? follow(target, since) : printOnce(target, since);
}

/** `--since`: an ISO date-time, or a duration back from now; default: the last hour. */
export function sinceOf(value: string | undefined, now: number): string {
  if (value === undefined) return new Date(now - DEFAULT_SINCE_MS).toISOString();
  const duration = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
  if (duration)
    return new Date(now - Number(duration[1]) * (UNITS[duration[2] ?? 's'] ?? 1000)).toISOString();
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new CliError(
      `--since must be an ISO date-time or a duration like 30s, 10m, 2h, 1d; got "${value}"`,
    );
  }
  return new Date(ms).toISOString();
}

/** `<timestamp> <LEVEL> [conversation <id>] <message>`; control characters escaped, continuation lines indented. */
export function formatLine(log: LogLine): string {
  const where = log.conversationId !== undefined ? ` [conversation ${printable(log.conversationId)}]` : '';
  const message = printable(log.message.replace(/\r\n?/g, '\n')).replace(/\n/g, '\n    ');
  return `${printable(log.timestamp)} ${printable(log.level.toUpperCase())}${where} ${message}\n`;
}

/** Keeps a bot's text from driving the terminal: control characters other than newline and tab are escaped. */
export function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    const control = (code < 0x20 && ch !== '\n' && ch !== '\t') || (code >= 0x7f && code <= 0x9f);
    out += control ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
  }
  return out;
}

/**
 * Which lines were printed, so a line is never printed twice though polls overlap. A line is known by
 * all its fields; lines identical in every field (same millisecond) are told apart by count: a poll
 * that sees the n-th copy of a line prints it only if fewer than n were printed.
 */
class Printed {
  private readonly counts = new Map<string, { timestamp: string; count: number }>();
  newest: string | undefined;

  /** Returns a counter for one walk over the window; call it with each line, in order; true: print it. */
  walk(): (log: LogLine) => boolean {
    const seen = new Map<string, number>();
    return (log) => {
      const key = JSON.stringify([
        log.timestamp,
        log.level,
        log.message,
        log.conversationId,
        log.userId,
        log.workflowId,
      ]);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const printed = this.counts.get(key);
      if (printed && printed.count >= n) return false;
      this.counts.set(key, { timestamp: log.timestamp, count: n });
      if (this.newest === undefined || log.timestamp > this.newest) this.newest = log.timestamp;
      return true;
    };
  }

  /** Lines before the window are never fetched again: forget them. */
  forgetBefore(timestamp: string): void {
    for (const [key, entry] of this.counts) if (entry.timestamp < timestamp) this.counts.delete(key);
  }
}

async function printOnce(target: Target, since: string): Promise<number> {
  await printWindow(target, since, () => true);
  return 0;
}

async function follow(target: Target, since: string): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const printed = new Printed();
  let windowStart = since;
  let warned = false;
  try {
    while (!stop.signal.aborted) {
      try {
        await printWindow(target, windowStart, printed.walk(), stop.signal);
        if (warned) process.stderr.write('parley: reconnected\n');
        warned = false;
      } catch (err) {
        if (stop.signal.aborted) break;
        if (!(err instanceof TransientError)) throw err;
        if (!warned) process.stderr.write(`parley: ${err.message}; retrying every second\n`);
        warned = true;
      }
      if (printed.newest !== undefined) {
        const lookback = new Date(Date.parse(printed.newest) - LOOKBACK_MS).toISOString();
        if (lookback > windowStart) windowStart = lookback;
        printed.forgetBefore(windowStart);
      }
      // Aborted by Ctrl-C: the loop ends on its next check.
      await sleep(POLL_INTERVAL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Walks every page of lines from `timeStart` to now, printing those `fresh` accepts. */
async function printWindow(
  target: Target,
  timeStart: string,
  fresh: (log: LogLine) => boolean,
  signal?: AbortSignal,
): Promise<void> {
  let nextToken: string | undefined;
  do {
    const page = await fetchPage(target, timeStart, nextToken, signal);
    for (const log of page.logs) if (fresh(log)) process.stdout.write(formatLine(log));
    nextToken = page.nextToken;
  } while (nextToken);
}

async function fetchPage(
  target: Target,
  timeStart: string,
  nextToken: string | undefined,
  signal: AbortSignal | undefined,
): Promise<LogsPage> {
  // Its own fetch, not the CLI's client: a failure the server may get over is told apart (TransientError).
  const wire = requestOf(specOf(APIS.admin.operations, 'getBotLogs'), {
    id: target.botId,
    timeStart,
    level: target.level,
    nextToken,
  });
  const url = `${target.url.replace(/\/+$/, '')}${mountOf(APIS.admin)}${targetOfWire(wire)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: {
        [HEADERS.authorization]: `Bearer ${target.token}`,
        [HEADERS.workspaceId]: target.workspaceId,
      },
      ...(signal && { signal }),
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new TransientError(`cannot reach ${target.url} (${cause ?? (err as Error).message})`);
  }
  // A body that is not JSON (a proxy's page): the status below tells what happened.
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const { type, message } = (body ?? {}) as { type?: unknown; message?: unknown };
    const text =
      typeof type === 'string' && typeof message === 'string' ? `${type}: ${message}` : `HTTP ${res.status}`;
    if (res.status >= 500 || res.status === 429) throw new TransientError(`the server answered ${text}`);
    throw new CliError(text);
  }
  if (!isLogsPage(body)) throw new CliError(`${url} did not answer with a getBotLogs response`);
  return body;
}

function isLogsPage(value: unknown): value is LogsPage {
  if (typeof value !== 'object' || value === null) return false;
  const { logs, nextToken } = value as { logs?: unknown; nextToken?: unknown };
  if (nextToken !== undefined && typeof nextToken !== 'string') return false;
  return (
    Array.isArray(logs) &&
    logs.every((l: unknown) => {
      if (typeof l !== 'object' || l === null) return false;
      const { timestamp, level, message, conversationId, userId, workflowId } = l as Record<string, unknown>;
      const optional = [conversationId, userId, workflowId];
      return (
        typeof timestamp === 'string' &&
        typeof level === 'string' &&
        typeof message === 'string' &&
        optional.every((v) => v === undefined || typeof v === 'string')
      );
    })
  );
}
