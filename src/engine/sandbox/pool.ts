/**
 * The Sandbox the engine uses: bot code runs in a small pool of supervised sandbox processes,
 * never in the API process. A version always goes to the same process (by a hash of its id), so
 * its isolate stays warm there.
 */
import { DEFAULT_MAX_PROCESS_MEMORY_MB } from './limits.ts';
import { SandboxProcess } from './supervisor.ts';
import type { SandboxLogger } from './supervisor.ts';
import type { BotProgram, CallContext, CallOutcome, HostHandler, Sandbox } from './types.ts';

export type { SandboxLogger } from './supervisor.ts';

export interface ProcessSandboxOptions {
  /** How many sandbox processes to run (default 1). */
  processes?: number;
  /** The most memory one sandbox process may hold (resident, in MB); past it, it is restarted. */
  maxMemoryMb?: number;
  /** Told each time a sandbox process is restarted. */
  onRestart?: () => void;
  /** Told of each call into bot code (what a turn's cost is counted in). */
  onCall?: () => void;
  /** Where failed calls and process crashes are reported (e.g. the server's pino logger). */
  logger?: SandboxLogger;
}

const SILENT: SandboxLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** FNV-1a: cheap, and spreads similar ids (ulids that share a time prefix) well. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class ProcessSandbox implements Sandbox {
  private readonly processes: SandboxProcess[];
  private readonly log: SandboxLogger;
  private readonly onCall: () => void;

  constructor(options: ProcessSandboxOptions = {}) {
    const count = Math.max(1, Math.floor(options.processes ?? 1));
    this.log = options.logger ?? SILENT;
    this.onCall = options.onCall ?? (() => undefined);
    this.processes = Array.from(
      { length: count },
      (_, i) =>
        new SandboxProcess(
          `sandbox-${i}`,
          this.log,
          options.maxMemoryMb ?? DEFAULT_MAX_PROCESS_MEMORY_MB,
          options.onRestart,
        ),
    );
  }

  async call(
    program: BotProgram,
    unit: string,
    context: CallContext,
    host: HostHandler,
  ): Promise<CallOutcome> {
    this.onCall();
    const outcome = await this.processFor(program.versionId).call(program, unit, context, host);
    if (!outcome.ok) {
      const { botId, versionId } = program;
      this.log.warn(
        { botId, versionId, unit, kind: outcome.kind },
        `bot code failed (${outcome.kind}): ${outcome.message}`,
      );
    }
    return outcome;
  }

  async unload(versionId: string): Promise<void> {
    this.processFor(versionId).unload(versionId);
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((process) => process.close()));
  }

  /** The pids of the sandbox processes running now (for operations, and for tests that kill one). */
  pids(): number[] {
    return this.processes.flatMap((process) => (process.pid === undefined ? [] : [process.pid]));
  }

  /** The pid of the process that runs a version (undefined while it restarts). */
  pidFor(versionId: string): number | undefined {
    return this.processFor(versionId).pid;
  }

  private processFor(versionId: string): SandboxProcess {
    const process = this.processes[hash(versionId) % this.processes.length];
    if (!process) throw new Error('the sandbox has no processes');
    return process;
  }
}
