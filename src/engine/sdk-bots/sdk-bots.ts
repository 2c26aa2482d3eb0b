/**
 * Runs bots deployed as `@botpress/sdk` bundles (what `bp deploy` uploads) in processes of the bundle
 * host, called with the hosted platform's invocation contract (`x-bp-operation`, `x-bp-type`,
 * `x-bp-configuration`, `x-bot-id`); and dev bots (`bp dev`'s) with the same contract in their
 * developer's process (`dev-bot-calls.ts`).
 */
import { codeVersion, SDK_RUNTIME } from '../../domain/bots/bot-code.ts';
import type { RuntimeBot } from '../../domain/bots/bots.ts';
import type { Domain } from '../../domain/index.ts';
import type { ClaimedEvent } from '../../domain/queue/event-queue.ts';
import type { BotActor } from '../../domain/workspace/actors.ts';
import type { ResolvedAction } from '../../domain/runtime/actions.ts';
import type { JsonObject } from '../../domain/shared/json.ts';
import { WORKFLOW_UPDATE_EVENT } from '../../domain/runtime/workflow-updates.ts';
import { FINISHED_STATUSES } from '../../domain/runtime/workflows.ts';
import type { Schedule } from '../bot-schedules.ts';
import { unlessMissing } from '../../domain/shared/errors.ts';
import { reasonOf } from '../failures.ts';
import type { BundleRequest, BundleResponse } from './bot-process.ts';
import { actionOutput, bundleRequest, invocationHeaders, secretsEnv, succeeded } from './bundle-host.ts';
import type { BundleHost, Hosted } from './bundle-host.ts';
import type { DevBotCalls } from './dev-bot-calls.ts';

/**
 * A bot as it is run: what is read once per deploy. A bundle's code goes to its file, which a process
 * of the host runs; a dev bot runs in its developer's process, at its `url`.
 */
interface SdkBot {
  bot: Omit<RuntimeBot, 'code'>;
  runs: { kind: 'bundle'; hosted: Hosted } | { kind: 'dev'; url: string; callTimeoutMs: number };
  /** Names what runs: the bundle's version, or the dev bot's url. */
  versionId: string;
}

export interface DevBots {
  calls: DevBotCalls;
  /** The longest a call may take, whatever the bot asks for (the bundles' limit). */
  callTimeoutMs: number;
}

/** How long the output of an action its definition calls `cacheable` answers the same input. */
const ACTION_CACHE_TTL_SECONDS = 3600;

export class SdkBots {
  private readonly bots = new Map<string, { updatedAt: string; sdkBot: SdkBot }>();

  constructor(
    private readonly domain: Domain,
    private readonly host: BundleHost,
    private readonly dev: DevBots,
  ) {}

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
      if (!sdkBot || this.host.isClosed) return;
      const webhookUrl = await this.domain.botWebhooks.urlOf(botId);
      await this.invoke(sdkBot, 'register', 'register', JSON.stringify({ webhookUrl }));
      this.host.botLog(botId, { level: 'info', message: `registered ${sdkBot.versionId}` });
    } catch (err) {
      this.host.botLog(botId, { level: 'error', message: `register failed: ${reasonOf(err)}` });
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

  private runAction(sdkBot: SdkBot, name: string, input: JsonObject): Promise<JsonObject> {
    return actionOutput(
      (request) => this.call(sdkBot, request),
      this.headers(sdkBot, 'action_triggered', 'action_triggered'),
      name,
      input,
    );
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

  private invoke(sdkBot: SdkBot, operation: string, type: string, body: string): Promise<BundleResponse> {
    return this.call(sdkBot, bundleRequest(this.headers(sdkBot, operation, type), body));
  }

  /** A call whose answer must be a success (a 5xx is tried again, a 4xx is final), wherever the bot runs. */
  private async call(sdkBot: SdkBot, request: BundleRequest): Promise<BundleResponse> {
    const { runs } = sdkBot;
    if (runs.kind === 'bundle') return this.host.invoke(runs.hosted, request);
    return succeeded(await this.dev.calls.call(runs.url, request, runs.callTimeoutMs), 'the dev bot');
  }

  private headers(sdkBot: SdkBot, operation: string, type: string): Record<string, string> {
    return invocationHeaders({
      botId: sdkBot.bot.botId,
      operation,
      type,
      configuration: sdkBot.bot.configuration,
    });
  }

  /** The bot of an event, if it is an SDK bot or a dev bot: read in full once per deploy. */
  private async load(botId: string): Promise<SdkBot | undefined> {
    const stamp = await this.domain.bots.runtimeStamp(botId);
    if (stamp?.runtime !== SDK_RUNTIME && !stamp?.dev) return undefined;
    const hit = this.bots.get(botId);
    if (hit && hit.updatedAt === stamp.updatedAt) return hit.sdkBot;
    const bot = await this.domain.bots.forRuntime(botId);
    if (!bot) return undefined;
    const { code, ...rest } = bot;
    if (bot.devUrl !== undefined) {
      const callTimeoutMs = Math.min((bot.maxExecutionTime ?? Infinity) * 1000, this.dev.callTimeoutMs);
      const sdkBot: SdkBot = {
        bot: rest,
        runs: { kind: 'dev', url: bot.devUrl, callTimeoutMs },
        versionId: `dev bot at ${bot.devUrl}`,
      };
      this.bots.set(botId, { updatedAt: bot.updatedAt, sdkBot });
      return sdkBot;
    }
    if (bot.runtime !== SDK_RUNTIME || code === null) return undefined;
    const versionId = codeVersion(botId, code);
    const hosted: Hosted = {
      key: botId,
      botId,
      workspaceId: bot.workspaceId,
      versionId,
      bundleFile: await this.host.writeBundle(botId, versionId, code),
      env: { BP_BOT_ID: botId, BP_WORKSPACE_ID: bot.workspaceId, ...secretsEnv(bot.secrets) },
      ...(bot.maxExecutionTime !== undefined && { callTimeoutMs: bot.maxExecutionTime * 1000 }),
      logPrefix: '',
    };
    const sdkBot: SdkBot = { bot: rest, runs: { kind: 'bundle', hosted }, versionId: `version ${versionId}` };
    this.bots.set(botId, { updatedAt: bot.updatedAt, sdkBot });
    return sdkBot;
  }

  /**
   * A `workflow_update`'s payload as the bot is given it: the workflow, its conversation and its user as
   * they are now (the queued payload has the workflow as it was). A workflow deleted since, or finished
   * (but for its `workflow_timedout`), has nothing left to run: undefined.
   */
  private async workflowUpdateOf(actor: BotActor, queued: JsonObject): Promise<JsonObject | undefined> {
    const { domain } = this;
    const type = queued.type;
    const queuedWorkflow = queued.workflow;
    const workflowId =
      typeof queuedWorkflow === 'object' && queuedWorkflow !== null && !Array.isArray(queuedWorkflow)
        ? queuedWorkflow.id
        : undefined;
    if (typeof workflowId !== 'string' || typeof type !== 'string') return undefined;
    const workflow = await unlessMissing(domain.workflows.get(actor, workflowId));
    if (!workflow) return undefined;
    if (FINISHED_STATUSES.includes(workflow.status) && type !== 'workflow_timedout') return undefined;
    const conversation =
      workflow.conversationId === undefined
        ? undefined
        : await unlessMissing(domain.conversations.get(actor, workflow.conversationId));
    const user =
      workflow.userId === undefined
        ? undefined
        : await unlessMissing(domain.users.get(actor, workflow.userId));
    return { type, workflow, ...(conversation && { conversation }), ...(user && { user }) };
  }

  /** The hosted platform's event record, with what its type carries: a message with its user and conversation. */
  private async eventOf(sdkBot: SdkBot, row: ClaimedEvent): Promise<Record<string, unknown> | undefined> {
    const actor: BotActor = { botId: sdkBot.bot.botId, workspaceId: sdkBot.bot.workspaceId };
    const { domain } = this;
    let payload: Record<string, unknown> = row.payload;
    if (row.type === 'message_created' && row.messageId !== undefined) {
      const { message, user, conversation } = await domain.turnRecords.read(actor, {
        messageId: row.messageId,
        userId: row.userId,
        conversationId: row.conversationId,
        stateKeys: [],
      });
      // Deleted before its turn: nothing to answer.
      if (!message || !conversation) return undefined;
      payload = { message, user, conversation, states: {} };
    }
    if (row.type === WORKFLOW_UPDATE_EVENT) {
      const update = await this.workflowUpdateOf(actor, row.payload);
      if (!update) return undefined;
      payload = update;
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
}
