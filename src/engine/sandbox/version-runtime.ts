/**
 * One deployed bot version inside a sandbox process: its warm isolate, the calls running in it, and
 * the watchdog that disposes the isolate when a call overruns. A disposed isolate (timeout after an
 * await, memory limit) is rebuilt from the program source on the next call.
 */
import { readFileSync } from 'node:fs';
import ivm from 'isolated-vm';
import { LogCollector } from './logs.ts';
import {
  LOAD_TIMEOUT_MS,
  MAX_HOST_CALLS,
  MAX_LOG_CHARS,
  MAX_LOG_CHARS_PER_CALL,
  MAX_LOG_LINES,
  MAX_MESSAGE_CHARS,
  MIN_MEMORY_MB,
  WATCHDOG_GRACE_MS,
} from './limits.ts';
import { readHostCall } from './protocol.ts';
import type { HostAnswer, ProgramSource } from './protocol.ts';
import type { FailureKind, HostCall, LogLine } from './types.ts';

const BOOTSTRAP = readFileSync(new URL('./isolate-bootstrap.js', import.meta.url), 'utf8');
/** isolated-vm's message when its own `timeout` interrupts synchronous code (the isolate survives). */
const IVM_TIMEOUT_MESSAGE = 'Script execution timed out.';

/** Sends a host call of bot code to the parent; the answer comes back through `answer()`. */
export type HostForwarder = (callId: number, requestId: number, call: HostCall) => void;

type Failure = { ok: false; kind: FailureKind; message: string };
/** The code returned: the JSON text the bootstrap's `run` resolved with (the parent reads it). */
type Result = { ok: true; text: string } | Failure;
/** A call's end, with the log lines of the code. */
export type RunOutcome = Result & { logs: LogLine[] };

/** One live isolate of the version, with the References to the bootstrap's functions inside it. */
interface Instance {
  isolate: ivm.Isolate;
  run: ivm.Reference;
  settle: ivm.Reference;
  end: ivm.Reference;
  calls: Set<ActiveCall>;
  /** Why it was disposed, once it is. */
  disposal?: Failure;
}

interface ActiveCall {
  id: number;
  timeoutMs: number;
  logs: LogCollector;
  hostCalls: number;
  instance?: Instance;
  done: boolean;
  finish(result: Result): void;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function failure(kind: FailureKind, message: string): Failure {
  return { ok: false, kind, message };
}

/** V8 has lost control of an isolate: isolated-vm asks the process to end, and the parent restarts it. */
function onCatastrophicError(message: string): void {
  process.stderr.write(`sandbox: catastrophic isolate error, aborting: ${message}\n`);
  process.abort();
}

export class VersionRuntime {
  private readonly calls = new Map<number, ActiveCall>();
  private loading: Promise<Instance> | undefined;
  private current: Instance | undefined;
  private retired = false;

  constructor(
    readonly program: ProgramSource,
    private readonly forward: HostForwarder,
  ) {}

  /** Runs one unit; never rejects. The watchdog runs from now, so loading the program counts too. */
  call(id: number, unit: string, context: string, timeoutMs: number): Promise<RunOutcome> {
    const startedAt = performance.now();
    const limitMs = Math.max(1, Math.ceil(timeoutMs));
    return new Promise((resolve) => {
      const call: ActiveCall = {
        id,
        timeoutMs: limitMs,
        logs: new LogCollector(),
        hostCalls: 0,
        done: false,
        finish: (result) => {
          if (call.done) return;
          call.done = true;
          clearTimeout(watchdog);
          this.calls.delete(id);
          call.instance?.calls.delete(call);
          resolve({ ...result, logs: call.logs.lines });
          this.disposeIfRetiredAndIdle();
        },
      };
      const watchdog = setTimeout(() => this.onWatchdog(call), limitMs + WATCHDOG_GRACE_MS);
      this.calls.set(id, call);
      this.instance()
        .then(
          (instance) => this.start(call, instance, unit, context, limitMs - (performance.now() - startedAt)),
          (error: unknown) =>
            call.finish(failure('runtime', `the program could not be loaded: ${errorMessage(error)}`)),
        )
        // A bug here must fail the call, not take the process (and every other bot's call) down.
        .catch((error: unknown) => call.finish(failure('runtime', `sandbox error: ${errorMessage(error)}`)));
    });
  }

  /** Delivers the parent's answer to a host call; dropped if the call is over. */
  answer(callId: number, requestId: number, answer: HostAnswer): void {
    const call = this.calls.get(callId);
    if (call?.instance && !call.done) this.settle(call, call.instance, requestId, answer);
  }

  /** The version is no longer wanted here: its isolate is disposed once the calls in flight end. */
  retire(): void {
    this.retired = true;
    this.disposeIfRetiredAndIdle();
  }

  private start(call: ActiveCall, instance: Instance, unit: string, context: string, remainingMs: number) {
    if (call.done) return; // the watchdog fired while the program was loading
    if (instance.disposal) {
      call.finish(this.collateral(instance.disposal));
      return;
    }
    call.instance = instance;
    instance.calls.add(call);
    instance.run
      .apply(undefined, [call.id, unit, context], {
        result: { promise: true, copy: true },
        // V8's own limit: it interrupts synchronous code, but not code that runs after an `await`.
        timeout: Math.max(1, Math.ceil(remainingMs)),
      })
      .then(
        (text: unknown) =>
          call.finish(
            typeof text === 'string'
              ? { ok: true, text }
              : failure('runtime', 'the sandbox returned no result'),
          ),
        (error: unknown) => this.onIsolateError(instance, call, error),
      );
  }

  private instance(): Promise<Instance> {
    if (!this.loading) {
      const loading = this.createInstance();
      this.loading = loading;
      loading.then(
        (instance) => {
          if (this.loading === loading) this.current = instance;
        },
        () => {
          if (this.loading === loading) this.loading = undefined;
        },
      );
    }
    return this.loading;
  }

  private async createInstance(): Promise<Instance> {
    const isolate = new ivm.Isolate({
      memoryLimit: Math.max(MIN_MEMORY_MB, this.program.memoryMb),
      onCatastrophicError,
    });
    try {
      const context = await isolate.createContext();
      const script = await isolate.compileScript(BOOTSTRAP, { filename: 'parley:sandbox-bootstrap.js' });
      const bootstrap: ivm.Reference = await script.run(context, {
        reference: true,
        timeout: LOAD_TIMEOUT_MS,
      });
      // The bridge only takes strings and numbers (isolated-vm copies them), so nothing of the host
      // ever becomes reachable from the isolate.
      const sendHostCall = new ivm.Callback(
        (callId: unknown, requestId: unknown, text: unknown) =>
          this.onHostCall(isolate, callId, requestId, text),
        { ignored: true },
      );
      const sendLog = new ivm.Callback(
        (callId: unknown, level: unknown, text: unknown) => this.onLog(isolate, callId, level, text),
        { ignored: true },
      );
      const caps = {
        logLines: MAX_LOG_LINES,
        logChars: MAX_LOG_CHARS,
        logCharsPerCall: MAX_LOG_CHARS_PER_CALL,
        messageChars: MAX_MESSAGE_CHARS,
      };
      const api: ivm.Reference = await bootstrap.apply(
        undefined,
        [
          sendHostCall,
          sendLog,
          new ivm.ExternalCopy(this.program.units).copyInto(),
          new ivm.ExternalCopy(caps).copyInto(),
        ],
        { result: { reference: true }, timeout: LOAD_TIMEOUT_MS },
      );
      const [run, settle, end] = await Promise.all(
        (['run', 'settle', 'end'] as const).map((name): Promise<ivm.Reference> =>
          api.get(name, { reference: true }),
        ),
      );
      if (!run || !settle || !end) throw new Error('the sandbox bootstrap did not load');
      return { isolate, run, settle, end, calls: new Set() };
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  private onHostCall(isolate: ivm.Isolate, callId: unknown, requestId: unknown, text: unknown): void {
    const call = this.liveCall(isolate, callId);
    if (!call || typeof requestId !== 'number' || !call.instance) return;
    let hostCall: HostCall | undefined;
    try {
      hostCall = readHostCall(typeof text === 'string' ? JSON.parse(text) : undefined);
    } catch {
      hostCall = undefined;
    }
    if (!hostCall) {
      this.settle(call, call.instance, requestId, { ok: false, message: 'malformed host call' });
    } else if (++call.hostCalls > MAX_HOST_CALLS) {
      const message = `too many host calls in one call (at most ${MAX_HOST_CALLS})`;
      this.settle(call, call.instance, requestId, { ok: false, message });
    } else {
      this.forward(call.id, requestId, hostCall);
    }
  }

  private onLog(isolate: ivm.Isolate, callId: unknown, level: unknown, text: unknown): void {
    const call = this.liveCall(isolate, callId);
    if (call && typeof level === 'string' && typeof text === 'string') call.logs.add(level, text);
  }

  /** The call a bridge message belongs to, if it is still running in that very isolate. */
  private liveCall(isolate: ivm.Isolate, callId: unknown): ActiveCall | undefined {
    const call = typeof callId === 'number' ? this.calls.get(callId) : undefined;
    return call && !call.done && call.instance?.isolate === isolate ? call : undefined;
  }

  private settle(call: ActiveCall, instance: Instance, requestId: number, answer: HostAnswer): void {
    const payload = answer.ok ? JSON.stringify(answer.value ?? null) : answer.message;
    // The code after the bot's `await` runs inside this apply, outside V8's timeout: the watchdog covers it.
    instance.settle
      .apply(undefined, [requestId, answer.ok, payload])
      .catch((error: unknown) => this.onIsolateError(instance, call, error));
  }

  private onIsolateError(instance: Instance, call: ActiveCall, error: unknown): void {
    if (instance.disposal || instance.isolate.isDisposed) {
      // Unless the watchdog did it, isolated-vm disposed the isolate for passing its memory limit.
      const limit = `${Math.max(MIN_MEMORY_MB, this.program.memoryMb)} MB`;
      const memory = failure('memory', `the code used more than its memory limit of ${limit}`);
      this.kill(instance, instance.disposal ?? memory);
      return;
    }
    const message = errorMessage(error);
    if (message === IVM_TIMEOUT_MESSAGE) {
      // V8 stopped the code mid-way, so the bootstrap could not clean up after the call.
      // Best effort: if the isolate cannot clean up either, the next call or the watchdog disposes it.
      instance.end.apply(undefined, [call.id]).catch(() => undefined);
      call.finish(this.timeoutFailure(call));
      return;
    }
    call.finish(failure('runtime', message));
  }

  private onWatchdog(call: ActiveCall): void {
    if (call.instance) this.kill(call.instance, this.timeoutFailure(call), call);
    else call.finish(this.timeoutFailure(call));
  }

  private timeoutFailure(call: ActiveCall): Failure {
    return failure('timeout', `the code ran longer than its time limit of ${call.timeoutMs} ms`);
  }

  /** A call that was running in an isolate disposed because of another call. */
  private collateral(cause: Failure): Failure {
    return failure(
      'crash',
      `the isolate was disposed during this call because another call of this bot version failed (${cause.kind}: ${cause.message})`,
    );
  }

  /**
   * Disposes an isolate and ends every call in it: `culprit` (or, without one, every call) with
   * `reason`, the others as collateral. The next call builds a new isolate.
   */
  private kill(instance: Instance, reason: Failure, culprit?: ActiveCall): void {
    instance.disposal ??= reason;
    if (this.current === instance) {
      this.current = undefined;
      this.loading = undefined;
    }
    try {
      instance.isolate.dispose();
    } catch {
      // Already disposed (by isolated-vm, for its memory limit).
    }
    for (const call of [...instance.calls]) {
      call.finish(!culprit || call === culprit ? reason : this.collateral(reason));
    }
  }

  private disposeIfRetiredAndIdle(): void {
    if (!this.retired || this.calls.size > 0) return;
    const loading = this.loading;
    this.loading = undefined;
    this.current = undefined;
    loading?.then(
      (instance) => {
        if (!instance.isolate.isDisposed) instance.isolate.dispose();
      },
      () => undefined,
    );
  }
}
