/**
 * One running SDK bot bundle: a child process started under Node's permission model (it may read its
 * bundle and its runner only; no child processes, workers or native addons), with an environment of
 * only what the SDK needs, and watched: a call past its time, memory past the limit, or output past
 * what a log can hold stops it, with the reason. A stopped process is not restarted here: the host
 * (sdk-bots.ts) starts a new one when the next call comes, after a backoff.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

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
  runnerFile: string;
  bundleFile: string;
  env: Record<string, string>;
  memoryMb: number;
  callTimeoutMs: number;
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

/** How often the resident memory of a bot process is read. */
const MEMORY_CHECK_MS = 250;
/**
 * Output a bot may write: a burst of up to OUTPUT_BURST_BYTES, refilled at OUTPUT_BYTES_PER_SECOND. A bot
 * past it is stopped for flooding its logs, however slowly this process reads (a reader that falls
 * behind slows the writer down, so a rate over one second alone could be escaped by flooding).
 */
const OUTPUT_BURST_BYTES = 1024 * 1024;
const OUTPUT_BYTES_PER_SECOND = 100 * 1024;
/** A line longer than this is cut in the logs. */
const MAX_LINE_CHARS = 8 * 1024;
/** What the runner exits with when the bundle fails to load (see bundle-runner.cjs). */
const LOAD_FAILED_EXIT_CODE = 78;
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
  private readonly memoryTimer: NodeJS.Timeout;
  private outputBudget = OUTPUT_BURST_BYTES;
  private outputCountedAt = Date.now();
  private lastStderr = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: BotProcessOptions,
    private readonly ready: Promise<void>,
  ) {
    this.memoryTimer = setInterval(() => void this.checkMemory(), MEMORY_CHECK_MS);
    this.memoryTimer.unref();
  }

  /** Starts the bundle; resolves once it is loaded, rejects with the reason it could not be. */
  static async start(options: BotProcessOptions): Promise<BotProcess> {
    const child = fork(options.runnerFile, [options.bundleFile], {
      execArgv: [
        '--experimental-permission',
        `--allow-fs-read=${options.runnerFile}`,
        `--allow-fs-read=${options.bundleFile}`,
        '--disable-warning=ExperimentalWarning',
        `--max-old-space-size=${options.memoryMb}`,
      ],
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    let becameReady!: () => void;
    let failedToStart!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      becameReady = resolve;
      failedToStart = reject;
    });
    const process = new BotProcess(child, options, ready);
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

  get pid(): number | undefined {
    return this.child.pid;
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

  /** Stops the process: it exits when its channel closes; one that does not is killed. */
  async stop(): Promise<void> {
    if (this.ended) return;
    this.stopReason ??= 'was stopped';
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const kill = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
    if (this.child.connected) this.child.disconnect();
    else this.child.kill('SIGKILL');
    await exited;
    clearTimeout(kill);
  }

  private watch(becameReady: () => void, failedToStart: (error: Error) => void): void {
    const { child } = this;
    child.on('message', (raw: unknown) => {
      const message = readMessage(raw);
      if (message === 'ready') becameReady();
      else if (message) this.settle(message.id, message.response);
    });
    child.on('error', (error) => this.kill(`failed: ${error.message}`));
    child.on('exit', (code, signal) => {
      this.ended = true;
      clearInterval(this.memoryTimer);
      const how =
        this.stopReason ??
        (code === LOAD_FAILED_EXIT_CODE
          ? `could not load its bundle: ${this.lastStderr.replace(/^the bundle failed to load: /, '')}`
          : signal
            ? `was killed by ${signal}`
            : `exited with code ${code}`);
      const reason = `the bot process ${how}`;
      const alone = this.calls.size === 1;
      for (const id of [...this.calls.keys()]) this.settle(id, new BotProcessEnded(reason, alone));
      failedToStart(new BotProcessEnded(reason));
      this.options.onExit(reason);
    });
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

  /** Resident memory covers every kind of allocation (buffers, strings, code), not only the JS heap. */
  private async checkMemory(): Promise<void> {
    if (this.ended || this.child.pid === undefined) return;
    let status: string;
    try {
      status = await readFile(`/proc/${this.child.pid}/status`, 'utf8');
    } catch {
      return; // not Linux, or the process just ended
    }
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    if (kb > this.options.memoryMb * 1024) this.kill(`held more than ${this.options.memoryMb} MB of memory`);
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
