/**
 * Runs `@botpress/sdk` bundles (what `bp deploy` uploads: a bot's, or an integration's installed on a
 * bot): one process per bundle version (bot-process.ts), each in an OS sandbox of its own, started when
 * a call comes, stopped when idle, replaced, or its bot deleted, restarted with a backoff after it ended
 * on its own. Slots are shared among workspaces: one workspace holds at most its share of them. The
 * bundle's own `@botpress/client` calls come back to this server's API through a socket of its sandbox,
 * with an API key of its bot made for the process and revoked when it ends (an integration's key acts as
 * that integration); anything else it reaches goes through the egress proxy, by the operator's policy.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { HEADERS } from '../../contract/headers.ts';
import type { BotLogEntry } from '../../domain/bots/bot-logs.ts';
import type { Domain } from '../../domain/index.ts';
import { isJsonObject } from '../../domain/shared/json.ts';
import type { Json, JsonObject } from '../../domain/shared/json.ts';
import { ApiError, keptErrorText } from '../../domain/shared/errors.ts';
import { BotFailure, reasonOf } from '../failures.ts';
import { EgressProxy } from '../egress/egress-proxy.ts';
import type { EgressPolicy } from '../egress/egress-proxy.ts';
import { OsSandbox, SandboxUnavailable } from '../os-sandbox/sandbox.ts';
import { BotCallTimedOut, BotProcess, BotProcessEnded } from './bot-process.ts';
import type { BundleRequest, BundleResponse } from './bot-process.ts';
import { runnerFiles } from './runner-build.ts';

/** How often idle processes, and processes of bots deleted meanwhile, are looked for. */
const IDLE_CHECK_MS = 5000;
/** Restart delays after a process ended on its own: doubling up to the maximum. */
const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 60_000;
/** A process that ran this long before ending was not in a crash loop: the backoff starts over. */
const STABLE_AFTER_MS = 60_000;

export interface BundleHostOptions {
  /** Where deployed bundles are written to be run (under the data folder). */
  bundlesDir: string;
  memoryMb: number;
  /** A process's CPU ceiling, in cores. */
  cpuCores: number;
  /** The longest a call may take, whatever the bot asks for. */
  callTimeoutMs: number;
  /** A process with nothing to do for this long is stopped. */
  idleMs: number;
  /** Bundle processes running at once. */
  maxProcesses: number;
  /** Of which one workspace may hold at most this many. */
  maxProcessesPerWorkspace: number;
  /** What the processes may reach beside this server's API; undefined: nothing. */
  egress: EgressPolicy | undefined;
  /** Hands a connection a process made to this server's API; `sandbox` tells whose it is. */
  serveApi(socket: Socket, sandbox: number): void;
}

/** A bundle as its process runs it. */
export interface Hosted {
  /** Names its process: the bot's id, or `botId/alias` for an integration installed on a bot. */
  key: string;
  /** The bot it acts for: its key is the bot's, its output goes to the bot's logs. */
  botId: string;
  /** The bot's workspace, whose share of the slots the process takes. */
  workspaceId: string;
  /** Set for an integration: its process's key acts as that installation of it. */
  integration?: { id: string; alias: string };
  /** Identifies the bundle: a new version replaces the process. */
  versionId: string;
  /** The bundle's file (`writeBundle` made it): its code is not held in memory. */
  bundleFile: string;
  /** Its environment beside the API's URL and its key (`SECRET_*`, the ids the SDK falls back on). */
  env: Record<string, string>;
  /** What the bot asks for (its `maxExecutionTime`); the operator's limit caps it. */
  callTimeoutMs?: number;
  /** What its lines in the bot's logs begin with. */
  logPrefix: string;
}

interface Running {
  versionId: string;
  botId: string;
  workspaceId: string;
  started: Promise<BotProcess>;
  lastUsed: number;
  /** Calls in flight, and the start under way: a process with neither may be stopped. */
  calls: number;
  life: Life;
}

interface Life {
  /** Stopped on purpose (idle, replaced, closing): its end is no crash. */
  stopping: boolean;
  /** The deletion of the process's API key once it ended, which a stop waits for (a closing server too). */
  revoked?: Promise<void>;
}

interface Restarts {
  crashes: number;
  notBefore: number;
  /** The version whose process kept ending: a new one owes nothing to its backoff. */
  versionId: string;
}

/** The bundle answered a call with a status the contract calls final (a 4xx), or ran past its time. */
export class BundleCallFailure extends BotFailure {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

export class BundleHost {
  private readonly running = new Map<string, Running>();
  /** The start of a process under way (or the last one), which its next caller waits for. */
  private readonly starting = new Map<string, Promise<BotProcess>>();
  private readonly restarts = new Map<string, Restarts>();
  private readonly idleTimer: NodeJS.Timeout;
  private readonly egress: EgressProxy | undefined;
  /** The sandbox of this host, or why it has none (then no bundle runs). */
  private sandbox: OsSandbox | SandboxUnavailable = new SandboxUnavailable('the engine has not started');
  private closed = false;
  private checking = false;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    private readonly options: BundleHostOptions,
  ) {
    this.egress = options.egress && new EgressProxy(options.egress);
    this.idleTimer = setInterval(() => void this.stopIdleAndRemoved(), IDLE_CHECK_MS);
    this.idleTimer.unref();
  }

  /**
   * Opens this machine's OS sandbox; where the machine cannot provide one, no bundle runs, and the
   * server's log says why at start (`unavailable` says it to whoever deploys one).
   */
  async start(): Promise<void> {
    try {
      const sandbox = await OsSandbox.open();
      this.sandbox = sandbox;
      this.log.info(
        { cgroups: `v${sandbox.cgroupVersion}`, egress: egressSummary(this.options.egress) },
        'SDK bots and integrations run in the OS sandbox',
      );
    } catch (err) {
      this.sandbox = err instanceof SandboxUnavailable ? err : new SandboxUnavailable(reasonOf(err));
      this.log.warn(
        { reason: this.sandbox.message },
        `SDK bots and integrations will not run here: ${this.sandbox.message}`,
      );
    }
  }

  /** Why no bundle runs here, or undefined when they do. */
  get unavailable(): string | undefined {
    return this.sandbox instanceof SandboxUnavailable ? this.sandbox.message : undefined;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * One call of the bundle's handler, answered as it answered. A process that ended under the call (or
   * ran past its time) because of it is a BundleCallFailure: running it again would end the next one too.
   */
  async call(hosted: Hosted, request: BundleRequest): Promise<BundleResponse> {
    const process = await this.processOf(hosted);
    const running = this.running.get(hosted.key);
    if (running) {
      running.lastUsed = Date.now();
      running.calls++;
    }
    try {
      return await process.call(request);
    } catch (err) {
      if (err instanceof BotCallTimedOut) throw new BundleCallFailure(err.message, true);
      // A process stopped on purpose (replaced, or the server closing) ended the call: it may be made again.
      if (err instanceof BotProcessEnded && err.alone && !running?.life.stopping)
        throw new BundleCallFailure(err.message);
      throw err;
    } finally {
      if (running) {
        running.lastUsed = Date.now();
        running.calls--;
      }
    }
  }

  /** A call whose answer must be a success: a 5xx may pass (it is thrown to be tried again), a 4xx is final. */
  async invoke(hosted: Hosted, request: BundleRequest): Promise<BundleResponse> {
    const response = await this.call(hosted, request);
    return succeeded(response, hosted.integration === undefined ? 'the bot' : 'the integration');
  }

  /**
   * `action_triggered`: runs an action in the bundle (`headers` name the operation); the answer's
   * `output` object is its result. `label` names the action in errors, which tell the caller what the
   * bundle did, never a fault of the server.
   */
  async runAction(
    hosted: Hosted,
    headers: Record<string, string>,
    name: string,
    input: JsonObject,
    label = name,
  ): Promise<JsonObject> {
    return actionOutput((request) => this.invoke(hosted, request), headers, name, input, label);
  }

  /**
   * Writes a version's bundle to the file its processes run, unless it is there; answers the file. One
   * file per version, under its owner (a bot or an integration), named by it: it never changes.
   */
  async writeBundle(owner: string, versionId: string, code: string): Promise<string> {
    const file = path.join(this.options.bundlesDir, owner, `${versionId}.cjs`);
    await writeOnce(file, code);
    return file;
  }

  /** A line in the bot's logs (written with others in a batch). */
  botLog(botId: string, entry: BotLogEntry): void {
    this.domain.botLogs.append(botId, [entry]);
  }

  /** Stops the processes of a bot (its own, and its integrations'), at once: it was deleted. */
  async stopBot(botId: string): Promise<void> {
    const keys = [...this.running].filter(([, running]) => running.botId === botId).map(([key]) => key);
    await Promise.all(keys.map((key) => this.stop(key)));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleTimer);
    await Promise.all([...this.running.keys()].map((key) => this.stop(key)));
    if (this.sandbox instanceof OsSandbox) await this.sandbox.close();
  }

  /**
   * The running process of the bundle's current version, started (or replacing an older one) if
   * needed. Starts of one key happen one at a time: the first messages of many conversations to a bot
   * with no process start one process, not one each.
   */
  private async processOf(hosted: Hosted): Promise<BotProcess> {
    const before = this.starting.get(hosted.key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.ensureProcess(hosted));
    this.starting.set(hosted.key, mine);
    try {
      return await mine;
    } finally {
      if (this.starting.get(hosted.key) === mine) this.starting.delete(hosted.key);
    }
  }

  private async ensureProcess(hosted: Hosted): Promise<BotProcess> {
    const { key } = hosted;
    const current = this.running.get(key);
    if (current && current.versionId === hosted.versionId) {
      const process = await current.started;
      if (process.alive) return process;
    }
    if (current && current.versionId !== hosted.versionId) await this.stop(key);
    if (this.closed) throw new Error('the server is closing');
    if (this.sandbox instanceof SandboxUnavailable)
      throw new BundleCallFailure(`SDK bots cannot run on this server: ${this.sandbox.message}`);
    // A new version (a fix, likely) starts at once, and its own backoff starts from nothing.
    if (this.restarts.get(key)?.versionId !== hosted.versionId) this.restarts.delete(key);
    const wait = (this.restarts.get(key)?.notBefore ?? 0) - Date.now();
    if (wait > 0)
      throw new Error(`its process is starting again after it ended (in ${Math.ceil(wait / 1000)} s)`);
    // The room is made and taken with no wait between: starts of others cannot pass the bound.
    this.makeRoom(hosted);
    const life: Life = { stopping: false };
    const running: Running = {
      versionId: hosted.versionId,
      botId: hosted.botId,
      workspaceId: hosted.workspaceId,
      started: this.startProcess(hosted, life, this.sandbox),
      lastUsed: Date.now(),
      // The start counts as a call: a start slower than the idle time is not stopped as idle.
      calls: 1,
      life,
    };
    this.running.set(key, running);
    try {
      return await running.started;
    } catch (err) {
      if (this.running.get(key) === running) this.running.delete(key);
      throw err;
    } finally {
      running.calls--;
      running.lastUsed = Date.now();
    }
  }

  private async startProcess(hosted: Hosted, life: Life, sandbox: OsSandbox): Promise<BotProcess> {
    const { botId, key } = hosted;
    const runner = await runnerFiles(this.options.bundlesDir);
    const apiKey = await this.domain.botKeys.createForRuntime(
      botId,
      `process of version ${hosted.versionId}`,
      hosted.integration,
    );
    const startedAt = Date.now();
    const { egress } = this;
    return BotProcess.start({
      sandbox,
      runner,
      name: hosted.integration === undefined ? 'bot' : 'integration',
      bundleFile: hosted.bundleFile,
      env: { ...hosted.env, BP_TOKEN: apiKey.value },
      memoryMb: this.options.memoryMb,
      cpuCores: this.options.cpuCores,
      callTimeoutMs: Math.min(hosted.callTimeoutMs ?? Infinity, this.options.callTimeoutMs),
      serveApi: (socket, sandbox) => this.options.serveApi(socket, sandbox),
      ...(egress && {
        serveEgress: (socketPath: string, apiSocket: string) =>
          egress.serve(socketPath, apiSocket, ({ target, reason }) =>
            this.botLog(botId, {
              level: 'warn',
              message: `${hosted.logPrefix}a connection to ${target} was refused: ${reason}`,
            }),
          ),
      }),
      onOutput: (stream, line) =>
        this.botLog(botId, {
          level: stream === 'stderr' ? 'error' : 'info',
          message: `${hosted.logPrefix}${line}`,
        }),
      onExit: (reason) => {
        life.revoked = this.domain.botKeys
          .deleteForRuntime(apiKey.id)
          .catch((err: unknown) => this.log.warn({ err, key }, 'could not revoke a bundle process key'));
        if (this.running.get(key)?.life === life) this.running.delete(key);
        if (!life.stopping && !this.closed) this.onEnded(hosted, startedAt, reason);
      },
    });
  }

  /** A process that ended on its own: the bot's logs say why, and its next start waits a backoff. */
  private onEnded(hosted: Hosted, startedAt: number, reason: string): void {
    const previous = this.restarts.get(hosted.key);
    const before = previous?.versionId === hosted.versionId ? previous.crashes : 0;
    const crashes = Date.now() - startedAt > STABLE_AFTER_MS ? 1 : before + 1;
    const delay = Math.min(RESTART_BASE_MS * 2 ** (crashes - 1), RESTART_MAX_MS);
    this.restarts.set(hosted.key, { crashes, notBefore: Date.now() + delay, versionId: hosted.versionId });
    this.botLog(hosted.botId, {
      level: 'error',
      message: `${hosted.logPrefix}${reason}; it starts again when a call comes, in ${delay / 1000} s at the earliest`,
    });
    this.log.warn({ key: hosted.key, reason, restartInMs: delay }, 'an SDK bundle process ended');
  }

  private async stop(key: string): Promise<void> {
    const running = this.running.get(key);
    if (!running) return;
    running.life.stopping = true;
    this.running.delete(key);
    try {
      await (await running.started).stop();
    } catch {
      // it never started: nothing to stop
    }
    await running.life.revoked;
  }

  /**
   * A workspace at its share of the slots gives up its own process idle longest, or waits; past the
   * limit of all processes, the one idle longest stops; if every one is busy, the call waits (it is tried
   * again later).
   */
  private makeRoom(hosted: Hosted): void {
    const { maxProcesses, maxProcessesPerWorkspace } = this.options;
    const own = [...this.running].filter(([, running]) => running.workspaceId === hosted.workspaceId);
    if (own.length >= maxProcessesPerWorkspace) {
      if (this.stopIdlest(own)) return;
      this.refuseSlot(hosted, `all ${maxProcessesPerWorkspace} of its workspace's bot processes are busy`);
    }
    if (this.running.size < maxProcesses) return;
    if (this.stopIdlest([...this.running])) return;
    this.refuseSlot(hosted, `all ${maxProcesses} bot processes are busy`);
  }

  /** Stops the process idle longest among `entries`, if one is idle; answers whether one was. */
  private stopIdlest(entries: [string, Running][]): boolean {
    let oldest: [string, Running] | undefined;
    for (const entry of entries) {
      if (entry[1].calls > 0) continue;
      if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    }
    // Its place is given up at once; its process ends in the background.
    if (oldest) void this.stop(oldest[0]);
    return oldest !== undefined;
  }

  private refuseSlot(hosted: Hosted, why: string): never {
    const message = `${hosted.key} waits for a process slot: ${why}`;
    this.log.warn({ key: hosted.key, workspaceId: hosted.workspaceId }, message);
    throw new Error(message);
  }

  /**
   * Stops processes idle past the idle time, and those of bots deleted meanwhile (by another server
   * process too; this one stops its own at once, `stopBot`).
   */
  private async stopIdleAndRemoved(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const before = Date.now() - this.options.idleMs;
      for (const [key, running] of this.running) {
        if (running.calls === 0 && running.lastUsed < before) void this.stop(key);
      }
      const botIds = new Set([...this.running.values()].map((running) => running.botId));
      for (const botId of botIds) {
        if (!(await this.domain.bots.runtimeStamp(botId))) await this.stopBot(botId);
      }
    } catch (err) {
      this.log.warn({ err }, 'could not look for the processes of deleted bots');
    } finally {
      this.checking = false;
    }
  }
}

function egressSummary(egress: EgressPolicy | undefined): string {
  if (!egress) return "none (this server's API only)";
  const allowed = egress.allowed.length > 0 ? ` and ${egress.allowed.length} private target(s)` : '';
  return `${egress.internet ? 'the public internet' : 'no internet'}${allowed}`;
}

/** `response` if it is a success: a 5xx may pass (it is thrown to be tried again), a 4xx is final. */
export function succeeded(response: BundleResponse, who: string): BundleResponse {
  if (response.status >= 500) throw new Error(`${who} answered ${response.status}: ${errorOf(response)}`);
  if (response.status >= 400)
    throw new BundleCallFailure(`${who} answered ${response.status}: ${errorOf(response)}`);
  return response;
}

/**
 * `action_triggered` through `invoke` (a bundle's process, or a dev bot's): the answer's `output` object
 * is the action's result; `label` names the action in errors.
 */
export async function actionOutput(
  invoke: (request: BundleRequest) => Promise<BundleResponse>,
  headers: Record<string, string>,
  name: string,
  input: JsonObject,
  label = name,
): Promise<JsonObject> {
  let response: BundleResponse;
  try {
    response = await invoke(bundleRequest(headers, JSON.stringify({ type: name, input })));
  } catch (err) {
    throw callError(err, `The action "${label}" failed`);
  }
  const output = outputOf(response.body);
  if (!output) throw new ApiError('Runtime', `The action "${label}" answered no output object`);
  return output;
}

/** A failed call as its API caller is told: a time-out, else what the bundle did (`otherwise`). */
export function callError(
  err: unknown,
  message: string,
  otherwise: 'Runtime' | 'Internal' = 'Runtime',
): ApiError {
  const timedOut = err instanceof BundleCallFailure && err.timedOut;
  return new ApiError(timedOut ? 'OperationTimeout' : otherwise, `${message}: ${reasonOf(err)}`);
}

/** What a failed call said: the SDK's `{error}` or an API error's `message`, else the body itself. */
export function errorOf(response: BundleResponse): string {
  try {
    const parsed: unknown = JSON.parse(response.body);
    if (typeof parsed === 'object' && parsed !== null) {
      if ('message' in parsed && typeof parsed.message === 'string') return parsed.message;
      if ('error' in parsed && typeof parsed.error === 'string') return parsed.error;
    }
  } catch {
    // not JSON
  }
  return keptErrorText(response.body) || 'no body';
}

/**
 * The configuration's values as the hosted platform sends them: base64 of JSON `{ payload: "<values as
 * JSON>" }`, which newer SDKs parse. SDK 0.10 (what `bp init` makes here) hands the decoded object itself
 * to the bundle as `ctx.configuration`, so the values are also spread beside `payload`.
 */
function configurationHeader(values: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ ...values, payload: JSON.stringify(values) })).toString('base64');
}

/** What every call to a bundle's handler says: the bot it is for, the operation, and the configuration. */
export interface Invocation {
  botId: string;
  /** `event_received`, `action_triggered`, `register`... */
  operation: string;
  /** What the operation is about (the event's or action's type); the operation itself when nothing more. */
  type: string;
  configuration: Record<string, unknown>;
}

/** The headers of a call to a bundle's handler, as the hosted platform sends them. */
export function invocationHeaders({
  botId,
  operation,
  type,
  configuration,
}: Invocation): Record<string, string> {
  return {
    [HEADERS.botId]: botId,
    'x-bp-operation': operation,
    'x-bp-type': type,
    'x-bp-configuration': configurationHeader(configuration),
  };
}

/** `SECRET_<NAME>`: each secret's name in upper snake case, as the SDK reads it. */
export function secretsEnv(secrets: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(secrets).map(([name, value]) => [
      `SECRET_${name
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .replace(/[^A-Za-z0-9]+/g, '_')
        .toUpperCase()}`,
      value,
    ]),
  );
}

/** The `output` of an action's answer (`{ output }`), if it is an object. */
export function outputOf(body: string): JsonObject | undefined {
  let parsed: Json;
  try {
    // What JSON.parse answers is JSON.
    parsed = JSON.parse(body) as Json;
  } catch {
    return undefined;
  }
  return isJsonObject(parsed) && isJsonObject(parsed.output) ? parsed.output : undefined;
}

/** A POST of the invocation contract to a bundle's handler. */
export function bundleRequest(headers: Record<string, string>, body: string): BundleRequest {
  return {
    method: 'POST',
    path: '/',
    query: '',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  };
}

/** Writes a bundle unless it is there (a version's file never changes: its name is its hash). */
async function writeOnce(file: string, code: string): Promise<void> {
  const exists = await stat(file).then(
    () => true,
    () => false,
  );
  if (exists) return;
  await mkdir(path.dirname(file), { recursive: true });
  // A name of its own: two starts of a new version may write at once, and each renames its own whole
  // file into place.
  const partial = `${file}.${randomUUID()}.partial`;
  await writeFile(partial, code);
  await rename(partial, file);
}
