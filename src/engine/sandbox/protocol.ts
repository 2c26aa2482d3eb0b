/**
 * The IPC protocol between the API process (pool.ts, supervisor.ts) and a sandbox process (child.ts).
 * Both sides speak JSON over Node's IPC channel, each IPC message a batch: the messages one side posted
 * in one turn of its event loop (see Outbox). The child hosts untrusted code, so everything it sends is
 * checked here before the parent acts on it; the parent is trusted, so the child's checks are only
 * there to fail loudly on a programming error.
 */
import type { CallOutcome, FailureKind, HostCall, Json, LogLine } from './types.ts';

/** The part of a program a sandbox process needs to build (and rebuild) its isolate. */
export interface ProgramSource {
  versionId: string;
  botId: string;
  units: Record<string, string>;
  memoryMb: number;
}

/** The answer to one host call: its JSON result, or the message of the Error bot code will see. */
export type HostAnswer = { ok: true; value: Json } | { ok: false; message: string };

/** A call's outcome when it failed: what the sandbox process reports itself (its successes are `returned`). */
export type FailedCall = Extract<CallOutcome, { ok: false }>;

export type ParentMessage =
  /** Runs one unit. `program` is sent with the first call of a version to this process (and after a restart). */
  | {
      type: 'call';
      id: number;
      versionId: string;
      unit: string;
      timeoutMs: number;
      /** The CallContext as JSON: parsed once, in the isolate. */
      context: string;
      program?: ProgramSource;
    }
  | { type: 'hostAnswer'; id: number; requestId: number; answer: HostAnswer }
  | { type: 'unload'; versionId: string };

export type ChildMessage =
  | { type: 'ready' }
  /** The process holds more memory than allowed and is ending itself (the reason of its end). */
  | { type: 'overMemory' }
  /** Bot code of call `id` asks the host something; the parent answers with a `hostAnswer` of the same ids. */
  | { type: 'host'; id: number; requestId: number; call: HostCall }
  /** The call failed (the code threw, ran out of time or memory, or could not run). */
  | { type: 'result'; id: number; outcome: FailedCall }
  /** The code returned: its result as the isolate wrote it (JSON text), read once, by the parent. */
  | { type: 'returned'; id: number; text: string; logs: LogLine[] };

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isJsonObject(value: unknown): value is { [key: string]: Json } {
  return isObject(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

const FAILURE_KINDS: readonly string[] = ['runtime', 'timeout', 'memory', 'crash'] satisfies FailureKind[];
const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies LogLine['level'][];

function isLogLine(value: unknown): value is LogLine {
  return (
    isObject(value) &&
    typeof value.level === 'string' &&
    LOG_LEVELS.includes(value.level) &&
    typeof value.message === 'string' &&
    typeof value.time === 'string'
  );
}

const SCOPE_NAMES = ['workflow', 'conversation', 'user', 'bot', 'turn'] as const;

function isFailedCall(value: unknown): value is FailedCall {
  if (!isObject(value) || !Array.isArray(value.logs) || !value.logs.every(isLogLine)) return false;
  return (
    value.ok === false &&
    typeof value.kind === 'string' &&
    FAILURE_KINDS.includes(value.kind) &&
    typeof value.message === 'string'
  );
}

/** Only the shapes of HostCall, with string names; args/input arrive as JSON (or missing: null). */
export function readHostCall(value: unknown): HostCall | undefined {
  if (!isObject(value)) return undefined;
  if (value.target === 'client' && typeof value.operation === 'string') {
    return { target: 'client', operation: value.operation, args: (value.args as Json | undefined) ?? null };
  }
  if (value.target === 'fetch')
    return { target: 'fetch', request: (value.request as Json | undefined) ?? null };
  if (value.target === 'action' && typeof value.alias === 'string' && typeof value.action === 'string') {
    return {
      target: 'action',
      alias: value.alias,
      action: value.action,
      input: (value.input as Json | undefined) ?? null,
    };
  }
  return undefined;
}

/** Checks a message from a sandbox process; anything malformed is `undefined` (and ignored). */
export function readChildMessage(value: unknown): ChildMessage | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'ready':
      return { type: 'ready' };
    case 'overMemory':
      return { type: 'overMemory' };
    case 'host': {
      const call = readHostCall(value.call);
      if (!isCount(value.id) || !isCount(value.requestId) || !call) return undefined;
      return { type: 'host', id: value.id, requestId: value.requestId, call };
    }
    case 'returned':
      return isCount(value.id) &&
        typeof value.text === 'string' &&
        Array.isArray(value.logs) &&
        value.logs.every(isLogLine)
        ? { type: 'returned', id: value.id, text: value.text, logs: value.logs }
        : undefined;
    case 'result': {
      const outcome = value.outcome;
      if (!isCount(value.id) || !isFailedCall(outcome)) return undefined;
      return { type: 'result', id: value.id, outcome };
    }
    default:
      return undefined;
  }
}

/** Checks a message from the parent. */
export function readParentMessage(value: unknown): ParentMessage | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'call':
      return isCount(value.id) &&
        typeof value.versionId === 'string' &&
        typeof value.unit === 'string' &&
        typeof value.timeoutMs === 'number' &&
        typeof value.context === 'string'
        ? (value as ParentMessage)
        : undefined;
    case 'hostAnswer':
      return isCount(value.id) && isCount(value.requestId) && isObject(value.answer)
        ? (value as ParentMessage)
        : undefined;
    case 'unload':
      return typeof value.versionId === 'string' ? { type: 'unload', versionId: value.versionId } : undefined;
    default:
      return undefined;
  }
}

/**
 * What the isolate's `run` returned (JSON text of `{ ok, value, scopes }` or `{ ok: false, message }`),
 * as a call's outcome. The text comes from untrusted code: anything malformed is a runtime failure.
 */
export function readReturned(text: string, logs: LogLine[]): CallOutcome {
  const failure = (message: string): CallOutcome => ({ ok: false, kind: 'runtime', message, logs });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return failure('the sandbox returned a result that is not JSON');
  }
  if (!isObject(parsed)) return failure('the sandbox returned a malformed result');
  if (parsed.ok !== true) {
    return failure(typeof parsed.message === 'string' ? parsed.message : 'the code failed');
  }
  const scopes = parsed.scopes;
  if (!isObject(scopes)) return failure('the sandbox returned a malformed result');
  const wrong = SCOPE_NAMES.find((name) => !isJsonObject(scopes[name]));
  if (wrong) return failure(`the ${wrong} variables are not an object`);
  const { workflow, conversation, user, bot, turn } = scopes;
  if (
    !isJsonObject(workflow) ||
    !isJsonObject(conversation) ||
    !isJsonObject(user) ||
    !isJsonObject(bot) ||
    !isJsonObject(turn)
  ) {
    return failure('the sandbox returned a malformed result');
  }
  // JSON.parse gave it, so it is JSON.
  const value = (parsed.value as Json | undefined) ?? null;
  return { ok: true, value, scopes: { workflow, conversation, user, bot, turn }, logs };
}

/**
 * The messages of one IPC message: each checked by `read`, the malformed ones counted apart. Anything
 * but an array is one malformed message.
 */
export function readBatch<T>(
  raw: unknown,
  read: (value: unknown) => T | undefined,
): { messages: T[]; malformed: number } {
  if (!Array.isArray(raw)) return { messages: [], malformed: 1 };
  const messages: T[] = [];
  let malformed = 0;
  for (const value of raw) {
    const message = read(value);
    if (message === undefined) malformed++;
    else messages.push(message);
  }
  return { messages, malformed };
}

/**
 * The messages one side posts in one turn of its event loop, sent as one IPC message: under load, one
 * write and one wake-up of the other process for many calls and answers, instead of one each.
 * It sends at the end of the turn (setImmediate), so a message waits for nothing but the code already
 * running.
 */
export class Outbox<T> {
  private queued: T[] = [];

  constructor(private readonly write: (batch: T[]) => void) {}

  post(message: T): void {
    this.queued.push(message);
    if (this.queued.length === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length > 0) this.write(batch);
  }
}
