/**
 * One running SDK bot bundle: a process in an OS sandbox of its own (os-sandbox/), under Node's permission
 * model besides (it may read its runner and its bundle only; no child processes, workers or native
 * addons), with an environment of only what the SDK needs. The kernel bounds its memory, CPU and
 * processes; this watches the rest: a call past its time, CPU burnt with no call in flight, or output
 * past what a log can hold stops it, with the reason. A stopped process is not restarted here: the host
 * (bundle-host.ts) starts a new one when the next call comes, after a backoff.
 */
import type { ChildProcess } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import net from 'node:net';
import type { Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { LAUNCH_FAILED_EXIT_CODE, NODE } from '../os-sandbox/sandbox.ts';
import type { OsSandbox, Sandboxed } from '../os-sandbox/sandbox.ts';
import type { RunnerFiles } from './runner-build.ts';
import {
  API_SOCKET,
  BUNDLE_FILE,
  EGRESS_ENV,
  EGRESS_SOCKET,
  FETCH_PROXY_FILE,
  LOAD_FAILED_EXIT_CODE,
  RUNNER_FILE,
} from './runner/layout.ts';

/** The request the hosted platform makes of a deployed bundle (what its `handler(req)` takes). */
export interface BundleRequest {
  method: 'POST';
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
}

/** What the bundle's handler answered. */
export interface BundleResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface BotProcessOptions {
  sandbox: OsSandbox;
  runner: RunnerFiles;
  bundleFile: string;
  /** Names the process's cgroup (letters, digits, `-`). */
  name: string;
  env: Record<string, string>;
  memoryMb: number;
  /** Its CPU ceiling, in cores. */
  cpuCores: number;
  callTimeoutMs: number;
  /** Hands a connection the process made to this server's API; `sandbox` tells whose it is. */
  serveApi(socket: Socket, sandbox: number): void;
  /**
   * Serves the egress proxy on `socketPath`, which sends what goes to this server to `apiSocket`
   * (answers how to stop); absent: the API is all the process reaches.
   */
  serveEgress?(socketPath: string, apiSocket: string): Promise<() => Promise<void>>;
  /** A line the bot wrote (a long line is cut). */
  onOutput(stream: 'stdout' | 'stderr', line: string): void;
  /** The process ended; `reason` says why when it did not end because it was stopped. */
  onExit(reason: string): void;
}

/**
 * The process ended (a crash, a kill for a limit) before it answered. `alone`: this was the only call in
 * flight, so it is what made the process end; a call beside others may have been ended by another.
 */
export class BotProcessEnded extends Error {
  constructor(
    message: string,
    readonly alone = false,
  ) {
    super(message);
  }
}

/** The call ran past its time; the process was stopped. */
export class BotCallTimedOut extends Error {}

/**
 * CPU a process may burn with no call in flight: CPU_IDLE_BUDGET_MS in any CPU_IDLE_WINDOW_MS with none
 * (5% of a core: timers, a garbage collection and the end of an answered call's work fit; a loop left
 * spinning does not, even on a machine so busy that it gets a small part of its ceiling).
 */
const CPU_IDLE_WINDOW_MS = 5000;
const CPU_IDLE_BUDGET_MS = 250;
/** How often its CPU time is read. */
const CPU_CHECK_MS = 1000;
/** Processes and threads a bot process may hold (Node itself runs about a dozen threads). */
const PIDS_MAX = 64;
/** The size of its scratch folder (`/tmp`); what it holds counts toward its memory too. */
const SCRATCH_BYTES = 16 * 1024 * 1024;
/**
 * Output a bot may write: a burst of up to OUTPUT_BURST_BYTES, refilled at OUTPUT_BYTES_PER_SECOND. A bot
 * past it is stopped for flooding its logs, however slowly this process reads (a reader that falls
 * behind slows the writer down, so a rate over one second alone could be escaped by flooding).
 */
const OUTPUT_BURST_BYTES = 1024 * 1024;
const OUTPUT_BYTES_PER_SECOND = 100 * 1024;
/** A line longer than this is cut in the logs. */
const MAX_LINE_CHARS = 8 * 1024;
/**
 * Connections one bot process may hold open to the API at once (its calls in flight: each is closed
 * at its answer, api/sandbox-connections.ts); past it new ones are closed. Each holds one of this
 * server's descriptors, which the bot's own limit would not bound.
 */
const API_CONNECTIONS_MAX = 64;
/** How long a bot may take to load its bundle and say it is ready. */
const START_TIMEOUT_MS = 30_000;
/** How long stop() lets a process exit on its own before killing it. */
const STOP_GRACE_MS = 2000;

interface InFlight {
  resolve(response: BundleResponse): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class BotProcess {
  private readonly calls = new Map<number, InFlight>();
  private nextId = 1;
  private stopReason: string | undefined;
  private ended = false;
  private readonly cpuTimer: NodeJS.Timeout;
  /** When the process was last seen with no call in flight, and its CPU time then. */
  private idleSince: { at: number; cpuMicros: number } | undefined;
  /** Whether the bundle has loaded: loading is work (START_TIMEOUT_MS bounds it), not idle spinning. */
  private loaded = false;
  private outputBudget = OUTPUT_BURST_BYTES;
  private outputCountedAt = Date.now();
  private lastStderr = '';
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly sandboxed: Sandboxed,
    private readonly options: BotProcessOptions,
  ) {
    this.child = sandboxed.child;
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.cpuTimer = setInterval(() => void this.checkCpu(), CPU_CHECK_MS);
    this.cpuTimer.unref();
  }

  /** Starts the bundle; resolves once it is loaded, rejects with the reason it could not be. */
  static async start(options: BotProcessOptions): Promise<BotProcess> {
    const sandboxed = await options.sandbox.spawn({
      name: options.name,
      limits: { memoryBytes: options.memoryMb * 1024 * 1024, cpuCores: options.cpuCores, pids: PIDS_MAX },
      scratchBytes: SCRATCH_BYTES,
      binds: [
        { source: options.runner.runner, target: RUNNER_FILE },
        { source: options.runner.fetchProxy, target: FETCH_PROXY_FILE },
        { source: options.bundleFile, target: BUNDLE_FILE },
      ],
      env: { ...options.env, ...(options.serveEgress && { [EGRESS_ENV]: 'on' }) },
      command: [
        NODE,
        '--experimental-permission',
        `--allow-fs-read=${RUNNER_FILE}`,
        `--allow-fs-read=${FETCH_PROXY_FILE}`,
        `--allow-fs-read=${BUNDLE_FILE}`,
        '--disable-warning=ExperimentalWarning',
        // undici's warning that the proxy agent of the runner's fetch is experimental: not the bot's.
        '--disable-warning=UNDICI-EHPA',
        `--max-old-space-size=${options.memoryMb}`,
        RUNNER_FILE,
      ],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      prepare: (runDir, id) => openSockets(runDir, id, options),
    });
    let becameReady!: () => void;
    let failedToStart!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      becameReady = resolve;
      failedToStart = reject;
    });
    const process = new BotProcess(sandboxed, options);
    process.watch(becameReady, failedToStart);
    const timer = setTimeout(
      () => process.kill(`did not load within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    try {
      await ready;
    } finally {
      clearTimeout(timer);
    }
    return process;
  }

  get alive(): boolean {
    return !this.ended;
  }

  get inFlight(): number {
    return this.calls.size;
  }

  call(request: BundleRequest): Promise<BundleResponse> {
    if (this.ended || !this.child.connected)
      return Promise.reject(new BotProcessEnded('the bot process has ended'));
    const id = this.nextId++;
    return new Promise<BundleResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        const seconds = this.options.callTimeoutMs / 1000;
        const call = this.calls.get(id);
        this.calls.delete(id);
        call?.reject(new BotCallTimedOut(`the bot did not answer within ${seconds} s`));
        this.kill(`a call ran past its time limit of ${seconds} s`);
      }, this.options.callTimeoutMs);
      this.calls.set(id, { resolve, reject, timer });
      this.child.send({ id, request }, (error) => {
        if (error) this.settle(id, new BotProcessEnded(`the call could not be sent: ${error.message}`));
      });
    });
  }

  /**
   * Stops the process: it exits when its channel closes; one that does not is killed. Whatever it left
   * in its sandbox is killed with it.
   */
  async stop(): Promise<void> {
    if (!this.ended) {
      this.stopReason ??= 'was stopped';
      const kill = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
      if (this.child.connected) this.child.disconnect();
      else this.child.kill('SIGKILL');
      await this.exited;
      clearTimeout(kill);
    }
    await this.sandboxed.release();
  }

  private watch(becameReady: () => void, failedToStart: (error: Error) => void): void {
    const { child } = this;
    child.on('message', (raw: unknown) => {
      const message = readMessage(raw);
      if (message === 'ready') {
        this.loaded = true;
        becameReady();
      } else if (message) this.settle(message.id, message.response);
    });
    child.on('error', (error) => this.kill(`failed: ${error.message}`));
    child.on('exit', (code, signal) => void this.onExited(code, signal, failedToStart));
    this.readLines(child.stdout, 'stdout');
    this.readLines(child.stderr, 'stderr');
  }

  private readLines(stream: Readable | null, name: 'stdout' | 'stderr'): void {
    if (!stream) return;
    stream.on('data', (chunk: Buffer) => this.countOutput(chunk.length));
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const cut = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… (cut)` : line;
      if (name === 'stderr') this.lastStderr = cut;
      this.options.onOutput(name, cut);
    });
  }

  private countOutput(bytes: number): void {
    const now = Date.now();
    const refill = ((now - this.outputCountedAt) / 1000) * OUTPUT_BYTES_PER_SECOND;
    this.outputCountedAt = now;
    this.outputBudget = Math.min(OUTPUT_BURST_BYTES, this.outputBudget + refill) - bytes;
    if (this.outputBudget < 0)
      this.kill(
        `wrote more output than its logs take (a burst of 1 MB, then ${OUTPUT_BYTES_PER_SECOND / 1024} kB a second)`,
      );
  }

  /** The process ended: why (the kernel's memory limit is read from its cgroup), and its calls fail. */
  private async onExited(
    code: number | null,
    signal: NodeJS.Signals | null,
    failedToStart: (error: Error) => void,
  ): Promise<void> {
    this.ended = true;
    clearInterval(this.cpuTimer);
    const oomKilled = (await this.sandboxed.cgroup.oomKills().catch(() => 0)) > 0;
    const how =
      this.stopReason ??
      (oomKilled
        ? `held more than ${this.options.memoryMb} MB of memory (the kernel stopped it)`
        : code === LOAD_FAILED_EXIT_CODE
          ? `could not load its bundle: ${this.lastStderr.replace(/^the bundle failed to load: /, '')}`
          : code === LAUNCH_FAILED_EXIT_CODE
            ? `could not be put in its sandbox: ${this.lastStderr || 'no message'}`
            : signal
              ? `was killed by ${signal}`
              : code !== null && code > 128
                ? `was killed by signal ${code - 128}`
                : `exited with code ${code}`);
    const reason = `the bot process ${how}`;
    const alone = this.calls.size === 1;
    for (const id of [...this.calls.keys()]) this.settle(id, new BotProcessEnded(reason, alone));
    failedToStart(new BotProcessEnded(reason));
    await this.sandboxed.release();
    this.options.onExit(reason);
  }

  /**
   * CPU burnt with no call in flight (a loop left running after an answer) stops the process: it holds a
   * share of the machine for nothing. The kernel caps its rate (the cgroup's ceiling); this its waste.
   */
  private async checkCpu(): Promise<void> {
    if (this.ended || !this.loaded) return;
    const cpuMicros = await this.sandboxed.cgroup.cpuMicros().catch(() => undefined);
    if (cpuMicros === undefined) return;
    const now = Date.now();
    if (this.calls.size > 0 || !this.idleSince) {
      this.idleSince = this.calls.size > 0 ? undefined : { at: now, cpuMicros };
      return;
    }
    if (now - this.idleSince.at < CPU_IDLE_WINDOW_MS) return;
    const usedMs = (cpuMicros - this.idleSince.cpuMicros) / 1000;
    this.idleSince = { at: now, cpuMicros };
    if (usedMs > CPU_IDLE_BUDGET_MS)
      this.kill(
        `used ${(usedMs / 1000).toFixed(1)} s of CPU in ${CPU_IDLE_WINDOW_MS / 1000} s with no call in flight`,
      );
  }

  private kill(reason: string): void {
    if (this.ended) return;
    this.stopReason ??= reason;
    this.child.kill('SIGKILL');
  }

  private settle(id: number, outcome: BundleResponse | Error): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    clearTimeout(call.timer);
    if (outcome instanceof Error) call.reject(outcome);
    else call.resolve(outcome);
  }
}

/** A message of the runner, checked: it runs the bot's code, so nothing it says is trusted. */
function readMessage(raw: unknown): 'ready' | { id: number; response: BundleResponse } | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  if ('ready' in raw && raw.ready === true) return 'ready';
  if (!('id' in raw) || typeof raw.id !== 'number' || !('response' in raw)) return undefined;
  const response = raw.response;
  if (typeof response !== 'object' || response === null) return undefined;
  const status = 'status' in response && typeof response.status === 'number' ? response.status : 500;
  const body = 'body' in response && typeof response.body === 'string' ? response.body : '';
  const headers: Record<string, string> = {};
  if ('headers' in response && typeof response.headers === 'object' && response.headers !== null) {
    for (const [name, value] of Object.entries(response.headers)) {
      if (typeof value === 'string') headers[name] = value;
    }
  }
  return { id: raw.id, response: { status, headers, body } };
}

/**
 * The sockets the sandbox finds in its folder: the API's (each connection handed to the server's HTTP
 * server as is) and the egress proxy's, when it has one. Answers how to close them.
 */
async function openSockets(
  runDir: string,
  sandbox: number,
  options: BotProcessOptions,
): Promise<() => Promise<void>> {
  const api = net.createServer((socket) => options.serveApi(socket, sandbox));
  api.maxConnections = API_CONNECTIONS_MAX;
  const apiPath = path.join(runDir, path.basename(API_SOCKET));
  await new Promise<void>((resolve, reject) => {
    api.once('error', reject);
    api.listen(apiPath, () => resolve());
  });
  let closeEgress: (() => Promise<void>) | undefined;
  try {
    // Its folder is the sandbox user's alone: the socket itself may be open to it.
    await chmod(apiPath, 0o666);
    closeEgress = await options.serveEgress?.(path.join(runDir, path.basename(EGRESS_SOCKET)), apiPath);
  } catch (err) {
    api.close();
    throw err;
  }
  return async () => {
    api.close();
    await closeEgress?.();
  };
}
