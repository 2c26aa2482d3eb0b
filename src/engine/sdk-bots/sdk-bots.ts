/**
 * Runs bots deployed as `@botpress/sdk` bundles (what `bp deploy` uploads): one process per bot
 * version (bot-process.ts), started when an event comes, stopped when idle or replaced, and called
 * with the hosted platform's invocation contract (`x-bp-operation`, `x-bp-type`, `x-bp-configuration`,
 * `x-bot-id`). The bundle's own `@botpress/client` calls come back to this server's Runtime API over
 * loopback with an API key of its bot, made for the process and revoked when it ends.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import { codeVersion, SDK_RUNTIME } from '../../domain/bots/bot-code.ts';
import type { RuntimeBot } from '../../domain/bots/bots.ts';
import type { BotLogEntry } from '../../domain/bots/bot-logs.ts';
import type { Domain } from '../../domain/index.ts';
import type { ClaimedEvent } from '../../domain/queue/event-queue.ts';
import type { BotActor } from '../../domain/workspace/actors.ts';
import type { ResolvedAction } from '../../domain/runtime/actions.ts';
import { ApiError } from '../../domain/shared/errors.ts';
import { isJsonObject } from '../../domain/shared/json.ts';
import type { Json, JsonObject } from '../../domain/shared/json.ts';
import type { Schedule } from '../bot-schedules.ts';
import { BotFailure, reasonOf, unlessMissing } from '../failures.ts';
import { BotCallTimedOut, BotProcess, BotProcessEnded } from './bot-process.ts';
import type { BundleRequest, BundleResponse } from './bot-process.ts';

const RUNNER_FILE = fileURLToPath(new URL('./bundle-runner.cjs', import.meta.url));
/** How often idle processes are looked for. */
const IDLE_CHECK_MS = 5000;
/** Bot log lines are written in batches at most this often. */
const LOG_FLUSH_MS = 200;
/** Restart delays after a process ended on its own: doubling up to the maximum. */
const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 60_000;
/** A process that ran this long before ending was not in a crash loop: the backoff starts over. */
const STABLE_AFTER_MS = 60_000;

export interface SdkBotsOptions {
  /** Where deployed bundles are written to be run (under the data folder). */
  bundlesDir: string;
  /** This server's origin, which the bundles' clients call (`BP_API_URL`). */
  apiUrl: string;
  memoryMb: number;
  callTimeoutMs: number;
  /** A bot process with nothing to do for this long is stopped. */
  idleMs: number;
  /** Bot processes running at once. */
  maxProcesses: number;
}

/** A bot as its process runs it: what is read once per deploy (its code stays on disk). */
interface SdkBot {
  bot: Omit<RuntimeBot, 'code'>;
  versionId: string;
  bundleFile: string;
}

interface Running {
  versionId: string;
  started: Promise<BotProcess>;
  lastUsed: number;
  /** Calls in flight (a process with none may be stopped). */
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
}

/** The bot answered a call with a status the contract calls final (a 4xx), or ran past its time. */
class SdkBotFailure extends BotFailure {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** How long the output of an action its definition calls `cacheable` answers the same input. */
const ACTION_CACHE_TTL_SECONDS = 3600;

export class SdkBots {
  private readonly bots = new Map<string, { updatedAt: string; sdkBot: SdkBot }>();
  private readonly running = new Map<string, Running>();
  /** The start of a bot's process under way (or the last one), which its next caller waits for. */
  private readonly starting = new Map<string, Promise<BotProcess>>();
  private readonly restarts = new Map<string, Restarts>();
  private readonly logs = new Map<string, BotLogEntry[]>();
  private readonly idleTimer: NodeJS.Timeout;
  private logTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    private readonly options: SdkBotsOptions,
  ) {
    this.idleTimer = setInterval(() => this.stopIdle(), IDLE_CHECK_MS);
    this.idleTimer.unref();
  }

  /** One queued event, delivered to the bot's handler: `event_received` with the hosted event. */
  async deliver(row: ClaimedEvent): Promise<'processed' | 'ignored'> {
    const sdkBot = await this.load(row.botId);
    if (!sdkBot) return 'ignored';
    const event = await this.eventOf(sdkBot, row);
    if (!event) return 'ignored';
    await this.invoke(sdkBot, 'event_received', row.type, JSON.stringify({ event }));
    return 'processed';
  }

  /**
   * A version of the bot's code was deployed: its handler is sent `register` with the bot's webhook URL,
   * as the hosted platform does at deploy (an SDK 7 bot runs its register handler). What it answers
   * goes to the bot's logs: a failed register does not undo the deploy.
   */
  async register(botId: string): Promise<void> {
    try {
      const sdkBot = await this.load(botId);
      if (!sdkBot || this.closed) return;
      const webhookUrl = await this.domain.botWebhooks.urlOf(botId);
      await this.invoke(sdkBot, 'register', 'register', JSON.stringify({ webhookUrl }));
      this.botLog(botId, { level: 'info', message: `registered version ${sdkBot.versionId}` });
    } catch (err) {
      this.botLog(botId, { level: 'error', message: `register failed: ${reasonOf(err)}` });
    }
  }

  /**
   * An SDK bot's own action, as its definition declares it, run by its handler (`action_triggered`).
   * A cached output holds for one deploy of the bot: any change to the bot starts the cache over.
   */
  async action(botId: string, name: string): Promise<ResolvedAction | undefined> {
    const sdkBot = await this.load(botId);
    const definition = sdkBot?.bot.actions[name];
    if (!sdkBot || !definition) return undefined;
    return {
      versionId: `${sdkBot.versionId}@${sdkBot.bot.updatedAt}`,
      input: definition.input.schema,
      output: definition.output.schema,
      ...(definition.cacheable && { cacheable: { ttlSeconds: ACTION_CACHE_TTL_SECONDS } }),
      run: (input) => this.runAction(sdkBot, name, input),
    };
  }

  private async runAction(sdkBot: SdkBot, name: string, input: JsonObject): Promise<JsonObject> {
    let response: BundleResponse;
    try {
      response = await this.invoke(
        sdkBot,
        'action_triggered',
        'action_triggered',
        JSON.stringify({ type: name, input }),
      );
    } catch (err) {
      // The caller of the action is told what the bot did, never a fault of the server.
      const reason = reasonOf(err);
      const timedOut = err instanceof SdkBotFailure && err.timedOut;
      throw new ApiError(timedOut ? 'OperationTimeout' : 'Runtime', `The action "${name}" failed: ${reason}`);
    }
    const output = outputOf(response.body);
    if (!output) throw new ApiError('Runtime', `The action "${name}" answered no output object`);
    return output;
  }

  /** An SDK bot's recurring events as schedules; undefined for a bot that is none. */
  async schedules(botId: string): Promise<Schedule[] | undefined> {
    const sdkBot = await this.load(botId);
    if (!sdkBot) return undefined;
    return Object.entries(sdkBot.bot.recurringEvents).map(([name, recurring]) => ({
      name,
      eventType: recurring.type,
      cron: recurring.schedule.cron,
      payload: recurring.payload,
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleTimer);
    await Promise.all([...this.running.keys()].map((botId) => this.stopBot(botId)));
    await this.flushLogs();
  }

  private async invoke(
    sdkBot: SdkBot,
    operation: string,
    type: string,
    body: string,
  ): Promise<BundleResponse> {
    const { bot } = sdkBot;
    const request: BundleRequest = {
      method: 'POST',
      path: '/',
      query: '',
      headers: {
        'content-type': 'application/json',
        'x-bot-id': bot.botId,
        'x-bp-operation': operation,
        'x-bp-type': type,
        'x-bp-configuration': configurationHeader(bot.configuration),
      },
      body,
    };
    const process = await this.processOf(sdkBot);
    const running = this.running.get(bot.botId);
    if (running) {
      running.lastUsed = Date.now();
      running.calls++;
    }
    let response: BundleResponse;
    try {
      response = await process.call(request);
    } catch (err) {
      // What ran alone when its process ended (or ran past its time) ended it: running it again would
      // end the next one too. A call that was beside others is tried again.
      if (err instanceof BotCallTimedOut) throw new SdkBotFailure(err.message, true);
      if (err instanceof BotProcessEnded && err.alone) throw new SdkBotFailure(err.message);
      throw err;
    } finally {
      if (running) {
        running.lastUsed = Date.now();
        running.calls--;
      }
    }
    if (response.status >= 500) throw new Error(`the bot answered ${response.status}: ${errorOf(response)}`);
    if (response.status >= 400)
      throw new SdkBotFailure(`the bot answered ${response.status}: ${errorOf(response)}`);
    return response;
  }

  /**
   * The bot's running process for its current version, started (or replacing an older one) if needed.
   * Starts of one bot happen one at a time: the first messages of many conversations to a bot with no
   * process start one process, not one each.
   */
  private async processOf(sdkBot: SdkBot): Promise<BotProcess> {
    const { botId } = sdkBot.bot;
    const before = this.starting.get(botId) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.ensureProcess(sdkBot));
    this.starting.set(botId, mine);
    try {
      return await mine;
    } finally {
      if (this.starting.get(botId) === mine) this.starting.delete(botId);
    }
  }

  private async ensureProcess(sdkBot: SdkBot): Promise<BotProcess> {
    const { botId } = sdkBot.bot;
    const current = this.running.get(botId);
    if (current && current.versionId === sdkBot.versionId) {
      const process = await current.started;
      if (process.alive) return process;
    }
    if (current && current.versionId !== sdkBot.versionId) await this.stopBot(botId);
    if (this.closed) throw new Error('the server is closing');
    const wait = (this.restarts.get(botId)?.notBefore ?? 0) - Date.now();
    if (wait > 0)
      throw new Error(`the bot's process is starting again after it ended (in ${Math.ceil(wait / 1000)} s)`);
    // The room is made and taken with no wait between: starts of other bots cannot pass the bound.
    this.makeRoom(botId);
    const life: Life = { stopping: false };
    const running: Running = {
      versionId: sdkBot.versionId,
      started: this.startProcess(sdkBot, life),
      lastUsed: Date.now(),
      calls: 0,
      life,
    };
    this.running.set(botId, running);
    try {
      return await running.started;
    } catch (err) {
      if (this.running.get(botId) === running) this.running.delete(botId);
      throw err;
    }
  }

  private async startProcess(sdkBot: SdkBot, life: Life): Promise<BotProcess> {
    const { bot } = sdkBot;
    const key = await this.domain.botKeys.createForRuntime(
      bot.botId,
      `process of version ${sdkBot.versionId}`,
    );
    const startedAt = Date.now();
    const secrets = Object.entries(bot.secrets).map(([name, value]): [string, string] => [
      `SECRET_${secretName(name)}`,
      value,
    ]);
    return BotProcess.start({
      runnerFile: RUNNER_FILE,
      bundleFile: sdkBot.bundleFile,
      env: {
        BP_API_URL: this.options.apiUrl,
        BP_TOKEN: key.value,
        BP_BOT_ID: bot.botId,
        BP_WORKSPACE_ID: bot.workspaceId,
        ...Object.fromEntries(secrets),
      },
      memoryMb: this.options.memoryMb,
      callTimeoutMs:
        bot.maxExecutionTime !== undefined ? bot.maxExecutionTime * 1000 : this.options.callTimeoutMs,
      onOutput: (stream, line) =>
        this.botLog(bot.botId, { level: stream === 'stderr' ? 'error' : 'info', message: line }),
      onExit: (reason) => {
        life.revoked = this.domain.botKeys
          .deleteForRuntime(key.id)
          .catch((err: unknown) =>
            this.log.warn({ err, botId: bot.botId }, 'could not revoke a bot process key'),
          );
        if (this.running.get(bot.botId)?.life === life) this.running.delete(bot.botId);
        if (!life.stopping && !this.closed) this.onEnded(bot.botId, startedAt, reason);
      },
    });
  }

  /** A process that ended on its own: its bot's logs say why, and its next start waits a backoff. */
  private onEnded(botId: string, startedAt: number, reason: string): void {
    const previous = this.restarts.get(botId);
    const crashes = Date.now() - startedAt > STABLE_AFTER_MS ? 1 : (previous?.crashes ?? 0) + 1;
    const delay = Math.min(RESTART_BASE_MS * 2 ** (crashes - 1), RESTART_MAX_MS);
    this.restarts.set(botId, { crashes, notBefore: Date.now() + delay });
    this.botLog(botId, {
      level: 'error',
      message: `${reason}; it starts again when an event comes, in ${delay / 1000} s at the earliest`,
    });
    this.log.warn({ botId, reason, restartInMs: delay }, 'an SDK bot process ended');
  }

  private async stopBot(botId: string): Promise<void> {
    const running = this.running.get(botId);
    if (!running) return;
    running.life.stopping = true;
    this.running.delete(botId);
    try {
      await (await running.started).stop();
    } catch {
      // it never started: nothing to stop
    }
    await running.life.revoked;
  }

  /** Past the limit of processes, the one idle longest stops; if every one is busy, the event waits. */
  private makeRoom(botId: string): void {
    if (this.running.size < this.options.maxProcesses) return;
    let oldest: [string, Running] | undefined;
    for (const entry of this.running) {
      if (entry[1].calls > 0) continue;
      if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    }
    if (oldest) {
      // Its place is given up at once; its process ends in the background.
      void this.stopBot(oldest[0]);
      return;
    }
    const message = `bot ${botId} waits for a process slot: all ${this.options.maxProcesses} bot processes are busy`;
    this.log.warn({ botId, maxProcesses: this.options.maxProcesses }, message);
    throw new Error(message);
  }

  private stopIdle(): void {
    const before = Date.now() - this.options.idleMs;
    for (const [botId, running] of this.running) {
      if (running.calls === 0 && running.lastUsed < before) void this.stopBot(botId);
    }
  }

  /** The bot of an event, if it is an SDK bot: read in full once per deploy, its bundle written to disk. */
  private async load(botId: string): Promise<SdkBot | undefined> {
    const stamp = await this.domain.bots.runtimeStamp(botId);
    if (stamp?.runtime !== SDK_RUNTIME) return undefined;
    const hit = this.bots.get(botId);
    if (hit && hit.updatedAt === stamp.updatedAt) return hit.sdkBot;
    const bot = await this.domain.bots.forRuntime(botId);
    if (!bot || bot.runtime !== SDK_RUNTIME || bot.code === null) return undefined;
    const { code, ...rest } = bot;
    const versionId = codeVersion(botId, code);
    // One file per version, named by it (a version's file never changes).
    const bundleFile = path.join(this.options.bundlesDir, botId, `${versionId}.cjs`);
    await writeOnce(bundleFile, code);
    const sdkBot: SdkBot = { bot: rest, versionId, bundleFile };
    this.bots.set(botId, { updatedAt: bot.updatedAt, sdkBot });
    return sdkBot;
  }

  /** The hosted platform's event record, with what its type carries: a message with its user and conversation. */
  private async eventOf(sdkBot: SdkBot, row: ClaimedEvent): Promise<Record<string, unknown> | undefined> {
    const actor: BotActor = { botId: sdkBot.bot.botId, workspaceId: sdkBot.bot.workspaceId };
    const { domain } = this;
    let payload: Record<string, unknown> = row.payload;
    if (row.type === 'message_created' && row.messageId !== undefined) {
      const [message, user, conversation] = await Promise.all([
        unlessMissing(domain.messages.get(actor, row.messageId)),
        row.userId === undefined ? undefined : unlessMissing(domain.users.get(actor, row.userId)),
        row.conversationId === undefined
          ? undefined
          : unlessMissing(domain.conversations.get(actor, row.conversationId)),
      ]);
      // Deleted before its turn: nothing to answer.
      if (!message || !conversation) return undefined;
      payload = { message, user, conversation, states: {} };
    }
    return {
      id: row.id,
      createdAt: row.createdAt,
      type: row.type,
      payload,
      conversationId: row.conversationId,
      userId: row.userId,
      messageId: row.messageId,
      status: row.status,
      failureReason: row.failureReason,
    };
  }

  private botLog(botId: string, entry: BotLogEntry): void {
    const pending = this.logs.get(botId);
    if (pending) pending.push({ ...entry, timestamp: new Date().toISOString() });
    else this.logs.set(botId, [{ ...entry, timestamp: new Date().toISOString() }]);
    this.logTimer ??= setTimeout(() => void this.flushLogs(), LOG_FLUSH_MS);
  }

  private async flushLogs(): Promise<void> {
    clearTimeout(this.logTimer);
    this.logTimer = undefined;
    const batches = [...this.logs];
    this.logs.clear();
    await Promise.all(
      batches.map(([botId, entries]) =>
        this.domain.botLogs
          .write(botId, entries)
          .catch((err: unknown) =>
            this.log.warn({ err, botId, lines: entries.length }, 'lines of a bot process were lost'),
          ),
      ),
    );
  }
}

/** The `output` of an action's answer (`{ output }`), if it is an object. */
function outputOf(body: string): JsonObject | undefined {
  let parsed: Json;
  try {
    // What JSON.parse answers is JSON.
    parsed = JSON.parse(body) as Json;
  } catch {
    return undefined;
  }
  return isJsonObject(parsed) && isJsonObject(parsed.output) ? parsed.output : undefined;
}

/** What a failed call said: the SDK's `{error}` or an API error's `message`, else the body itself. */
function errorOf(response: BundleResponse): string {
  try {
    const parsed: unknown = JSON.parse(response.body);
    if (typeof parsed === 'object' && parsed !== null) {
      if ('message' in parsed && typeof parsed.message === 'string') return parsed.message;
      if ('error' in parsed && typeof parsed.error === 'string') return parsed.error;
    }
  } catch {
    // not JSON
  }
  return response.body.slice(0, 500) || 'no body';
}

/**
 * The configuration's values as the hosted platform sends them: base64 of JSON `{ payload: "<values as
 * JSON>" }`, which newer SDKs parse. SDK 0.10 (what `bp init` makes here) hands the decoded object itself
 * to the bot as `ctx.configuration`, so the values are also spread beside `payload`.
 */
function configurationHeader(values: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ ...values, payload: JSON.stringify(values) })).toString('base64');
}

/** `SECRET_<NAME>`: the secret's name in upper snake case, as the SDK reads it. */
function secretName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
}

/** Writes a bundle unless it is there (a version's file never changes: its name is its hash). */
async function writeOnce(file: string, code: string): Promise<void> {
  const exists = await stat(file).then(
    () => true,
    () => false,
  );
  if (exists) return;
  await mkdir(path.dirname(file), { recursive: true });
  // A name of its own: two loads of a new version may write at once (a deploy's register and an event),
  // and each renames its own whole file into place.
  const partial = `${file}.${randomUUID()}.partial`;
  await writeFile(partial, code);
  await rename(partial, file);
}
