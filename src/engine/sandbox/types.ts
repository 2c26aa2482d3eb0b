/**
 * The contract between the engine and the sandbox that runs bot code. Bot code never runs in the API
 * process: it runs in isolated-vm isolates (one per deployed bot version, kept warm) inside supervised
 * child processes. Everything crossing this boundary is JSON.
 */

import type { Json, JsonObject } from '../../domain/shared/json.ts';

export type { Json, JsonObject };

/** The limits of one bot's code: per isolate memory, and per call time (wall clock, enforced by a watchdog). */
export interface SandboxLimits {
  memoryMb: number;
  timeoutMs: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { memoryMb: 128, timeoutMs: 5000 };

/**
 * A deployed bot version's code: every code unit (hook, action, execute-code card, expression),
 * already compiled to plain JavaScript. `units[id]` is the source of a function BODY (statements,
 * may use `await` and `return`), run with these names in scope and nothing else of the host:
 *   event, workflow, conversation, user, bot, env, turn, input, message, client, actions, console, fetch
 * (`input` for actions; `message` for the outgoing-message hooks).
 */
export interface BotProgram {
  /** Identifies the compiled code: a new deploy is a new version. */
  versionId: string;
  botId: string;
  units: Record<string, string>;
  limits: SandboxLimits;
}

/**
 * The state a unit sees. The variable scopes (workflow, conversation, user, bot, turn) are plain
 * objects the code may change; their final values come back in `CallOutcome.scopes`.
 */
export interface CallContext {
  event: JsonObject;
  workflow: JsonObject;
  conversation: JsonObject;
  user: JsonObject;
  bot: JsonObject;
  env: JsonObject;
  turn: JsonObject;
  input?: Json;
  message?: Json;
}

export type Scopes = Pick<CallContext, 'workflow' | 'conversation' | 'user' | 'bot' | 'turn'>;

/**
 * What bot code asks of the host: `client.<operation>(args)`, `actions.<alias>.<action>(input)`, or
 * `fetch(url, init)` (its request as the isolate's `fetch` writes it: url, method, headers as pairs, and a
 * body as `text` or `base64`).
 */
export type HostCall =
  | { target: 'client'; operation: string; args: Json }
  | { target: 'action'; alias: string; action: string; input: Json }
  | { target: 'fetch'; request: Json };

/** Answers host calls, in the API process, through the domain services. Rejections reach bot code as thrown Errors. */
export type HostHandler = (call: HostCall) => Promise<Json>;

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  time: string;
}

export type FailureKind =
  /** The code threw, rejected, overflowed its stack, or used something it may not. */
  | 'runtime'
  /** It ran past `timeoutMs` (including after an `await`). */
  | 'timeout'
  /** It ran past `memoryMb`: the isolate was disposed (and is recreated for the next call). */
  | 'memory'
  /** The sandbox process died during the call (it is restarted for the next call). */
  | 'crash';

export type CallOutcome =
  | { ok: true; value: Json; scopes: Scopes; logs: LogLine[] }
  | { ok: false; kind: FailureKind; message: string; logs: LogLine[] };

export interface Sandbox {
  /** Runs one unit of a program (loading the program into a warm isolate first if needed). */
  call(program: BotProgram, unit: string, context: CallContext, host: HostHandler): Promise<CallOutcome>;
  /** Drops the isolate of a version no longer deployed. */
  unload(versionId: string): Promise<void>;
  close(): Promise<void>;
}
