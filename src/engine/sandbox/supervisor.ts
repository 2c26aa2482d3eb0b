/**
 * One supervised sandbox process, seen from the API process: starts child.ts, sends it calls,
 * answers its host calls through each call's HostHandler, and restarts it (with a backoff) when it
 * dies. A process that dies fails every call it held with kind 'crash'; calls made while it is
 * (re)starting wait for it.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { FROM_SOURCE } from '../../paths.ts';
import { STUCK_PROCESS_GRACE_MS } from './limits.ts';
import { Outbox, readBatch, readChildMessage, readReturned } from './protocol.ts';
import type { ChildMessage, HostAnswer, ParentMessage } from './protocol.ts';
import { DEFAULT_LIMITS } from './types.ts';
import type { BotProgram, CallContext, CallOutcome, HostCall, HostHandler } from './types.ts';

/** The subset of a pino/Fastify logger the sandbox uses. */
export interface SandboxLogger {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

// The child is this module's sibling: its TypeScript source run through tsx (resolved here, so the
// child starts whatever the working directory is), or its compiled JavaScript.
// isolated-vm requires --no-node-snapshot on Node 20.
const CHILD_ENTRY = new URL(FROM_SOURCE ? './child.ts' : './child.js', import.meta.url);
const CHILD_EXEC_ARGV = FROM_SOURCE
  ? ['--no-node-snapshot', '--import', import.meta.resolve('tsx')]
  : ['--no-node-snapshot', '--enable-source-maps'];
/** Restart delays after a crash: immediate the first time, then doubling up to the maximum. */
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 10_000;
/** A process that ran this long before dying was not in a crash loop: the backoff starts over. */
const STABLE_AFTER_MS = 30_000;
/** How long close() lets a process exit on its own before killing it. */
const CLOSE_GRACE_MS = 2000;

interface Deferred<T> {
  promise: Promise<T>;
  settled: boolean;
  resolve(value: T): void;
  reject(error: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A start that fails while no call waits for it is not an unhandled rejection.
  promise.catch(() => undefined);
  const result: Deferred<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      result.settled = true;
      resolve(value);
    },
    reject: (error) => {
      result.settled = true;
      reject(error);
    },
  };
  return result;
}

function crash(message: string): CallOutcome {
  return { ok: false, kind: 'crash', message, logs: [] };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function positive(value: number, fallback: number): number {
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Bot code never needs the server's environment, which holds its secrets. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['NODE_ENV', 'TZ']) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

async function answerHostCall(host: HostHandler, call: HostCall): Promise<HostAnswer> {
  try {
    return { ok: true, value: (await host(call)) ?? null };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}

interface InFlight {
  host: HostHandler;
  resolve(outcome: CallOutcome): void;
  backstop: NodeJS.Timeout;
}

export class SandboxProcess {
  private process: ChildProcess | undefined;
  /** The current process's messages of this turn of the event loop, sent together at its end. */
  private outbox: Outbox<ParentMessage> | undefined;
  private ready = deferred<ChildProcess>();
  private readonly calls = new Map<number, InFlight>();
  /** The versions the current process has loaded, with the memory limit each was loaded with. */
  private readonly loaded = new Map<string, number>();
  private nextId = 1;
  private crashes = 0;
  private startedAt = 0;
  /** Why the parent killed the current process, for the message of the calls it held. */
  private killedBecause: string | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly name: string,
    private readonly log: SandboxLogger,
    /** The child ends itself past this (see child.ts); the parent restarts it. */
    private readonly maxMemoryMb: number,
    private readonly onRestart: () => void = () => undefined,
  ) {
    this.start();
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  async call(
    program: BotProgram,
    unit: string,
    context: CallContext,
    host: HostHandler,
  ): Promise<CallOutcome> {
    if (this.closing) return crash('the sandbox is closed');
    let child: ChildProcess;
    try {
      child = await this.ready.promise;
    } catch (error) {
      return crash(
        this.closing ? 'the sandbox is closed' : `the sandbox process did not start: ${errorMessage(error)}`,
      );
    }
    if (this.closing || child !== this.process || !child.connected)
      return crash('the sandbox process exited');

    const { versionId, botId, units } = program;
    const memoryMb = positive(program.limits.memoryMb, DEFAULT_LIMITS.memoryMb);
    const timeoutMs = positive(program.limits.timeoutMs, DEFAULT_LIMITS.timeoutMs);
    const id = this.nextId++;
    const fresh = this.loaded.get(versionId) !== memoryMb;
    if (fresh) this.loaded.set(versionId, memoryMb);
    const message: ParentMessage = {
      type: 'call',
      id,
      versionId,
      unit,
      timeoutMs,
      context: JSON.stringify(context),
      ...(fresh && { program: { versionId, botId, units, memoryMb } }),
    };
    return new Promise((resolve) => {
      // The child's watchdog answers at timeoutMs; if even that does not come, the process is stuck.
      const backstop = setTimeout(() => this.onStuck(child, id), timeoutMs + STUCK_PROCESS_GRACE_MS);
      this.calls.set(id, { host, resolve, backstop });
      if (!this.post(child, message))
        this.finish(id, crash('the call could not be sent to the sandbox process'));
    });
  }

  /** Drops a version's isolate in the process (after the calls in flight there end). */
  unload(versionId: string): void {
    if (this.loaded.delete(versionId) && this.process) this.post(this.process, { type: 'unload', versionId });
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private start(): void {
    this.restartTimer = undefined;
    this.killedBecause = undefined;
    this.startedAt = Date.now();
    const child = fork(CHILD_ENTRY, [String(this.maxMemoryMb)], {
      execArgv: CHILD_EXEC_ARGV,
      env: childEnv(),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.process = child;
    this.outbox = new Outbox((batch) => this.send(child, batch));
    child.on('message', (raw: unknown) => this.onMessage(child, raw));
    child.on('exit', (code, signal) =>
      this.onExit(child, signal ? `was killed by ${signal}` : `exited with code ${code}`),
    );
    child.on('error', (error) => {
      // Failed to spawn, or could not be signalled/messaged: either way this process is unusable.
      this.log.error({ sandbox: this.name, error: error.message }, 'sandbox process error');
      child.kill('SIGKILL');
      this.onExit(child, `failed: ${error.message}`);
    });
  }

  /** Queues a message for the current process; false if the channel is closed (the 'exit' handler fails the calls). */
  private post(child: ChildProcess, message: ParentMessage): boolean {
    if (!child.connected || child !== this.process || !this.outbox) return false;
    this.outbox.post(message);
    return true;
  }

  private send(child: ChildProcess, batch: ParentMessage[]): void {
    if (!child.connected) return; // the 'exit' handler fails the calls
    try {
      child.send(batch, (error) => {
        if (error) this.log.warn({ sandbox: this.name, error: error.message }, 'sandbox IPC send failed');
      });
    } catch {
      // The only way a connected send throws is a message JSON cannot encode (an answer of bot code's
      // host call): one by one, that message fails alone.
      for (const message of batch) this.sendAlone(child, message);
    }
  }

  private sendAlone(child: ChildProcess, message: ParentMessage): void {
    try {
      child.send([message]);
    } catch (error) {
      this.log.warn({ sandbox: this.name, error: errorMessage(error) }, 'sandbox IPC send failed');
      if (message.type === 'hostAnswer' && message.answer.ok) {
        const answer: HostAnswer = { ok: false, message: 'the host answer is not JSON' };
        this.sendAlone(child, { ...message, answer });
      } else if (message.type === 'call') {
        this.finish(message.id, crash('the call could not be sent to the sandbox process'));
      }
    }
  }

  private onMessage(child: ChildProcess, raw: unknown): void {
    if (child !== this.process) return;
    const { messages, malformed } = readBatch(raw, readChildMessage);
    if (malformed > 0) {
      this.log.warn({ sandbox: this.name, malformed }, 'ignored malformed messages from a sandbox process');
    }
    for (const message of messages) this.onChildMessage(child, message);
  }

  private onChildMessage(child: ChildProcess, message: ChildMessage): void {
    switch (message.type) {
      case 'ready':
        if (!this.ready.settled) this.ready.resolve(child);
        break;
      case 'overMemory':
        this.killedBecause = `held more than ${this.maxMemoryMb} MB of memory and was stopped`;
        break;
      case 'result':
        this.finish(message.id, message.outcome);
        break;
      case 'returned':
        this.finish(message.id, readReturned(message.text, message.logs));
        break;
      case 'host':
        this.onHostCall(child, message);
        break;
    }
  }

  private onHostCall(child: ChildProcess, { id, requestId, call }: Extract<ChildMessage, { type: 'host' }>) {
    const inFlight = this.calls.get(id);
    if (!inFlight) return; // the call is over: its code gets no answers any more
    void answerHostCall(inFlight.host, call).then((answer) => {
      if (child !== this.process || !this.calls.has(id)) return;
      this.post(child, { type: 'hostAnswer', id, requestId, answer });
    });
  }

  private finish(id: number, outcome: CallOutcome): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    clearTimeout(call.backstop);
    call.resolve(outcome);
  }

  private onStuck(child: ChildProcess, id: number): void {
    if (child !== this.process || !this.calls.has(id)) return;
    this.killedBecause = 'stopped answering and was killed';
    this.log.error({ sandbox: this.name, pid: child.pid }, 'sandbox process stopped answering; killing it');
    child.kill('SIGKILL');
  }

  private onExit(child: ChildProcess, how: string): void {
    if (child !== this.process) return;
    const reason = `the sandbox process ${this.killedBecause ?? how}`;
    this.process = undefined;
    this.outbox = undefined;
    this.loaded.clear();
    for (const id of [...this.calls.keys()]) this.finish(id, crash(reason));
    if (!this.ready.settled) this.ready.reject(new Error(reason));
    if (this.closing) return;

    this.ready = deferred();
    if (Date.now() - this.startedAt > STABLE_AFTER_MS) this.crashes = 0;
    const delay =
      this.crashes === 0 ? 0 : Math.min(RESTART_BASE_MS * 2 ** (this.crashes - 1), RESTART_MAX_MS);
    this.crashes++;
    this.onRestart();
    this.log.error({ sandbox: this.name, pid: child.pid, restartInMs: delay }, `${reason}; restarting it`);
    this.restartTimer = setTimeout(() => this.start(), delay);
  }

  private async shutdown(): Promise<void> {
    clearTimeout(this.restartTimer);
    if (!this.ready.settled) this.ready.reject(new Error('the sandbox is closed'));
    const child = this.process;
    if (!child) return;
    this.killedBecause = 'was closed';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // The child exits when its channel closes; a child stuck in native code is killed.
    const kill = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
    if (child.connected) child.disconnect();
    else child.kill('SIGKILL');
    await exited;
    clearTimeout(kill);
  }
}
