import type { FastifyBaseLogger } from 'fastify';
import type { BotActor } from '../domain/workspace/actors.ts';
import type { BotActionRunner, ResolvedAction } from '../domain/runtime/actions.ts';
import type { Domain } from '../domain/index.ts';
import type { ClaimedEvent } from '../domain/queue/event-queue.ts';
import { Dispatcher } from './dispatcher.ts';
import type { WorkPlace } from './leased-work.ts';
import type { TurnEnd } from './dispatcher.ts';
import type { Metrics } from '../metrics.ts';
import { BotFetch } from './bot-fetch.ts';
import type { BotTargets } from '../domain/shared/public-lookup.ts';
import { BotClient } from './bot-client.ts';
import { CallChain } from './call-chain.ts';
import { LoadedBots } from './loaded-bot.ts';
import type { LoadedBot } from './loaded-bot.ts';
import { unitIds } from '../package/format.ts';
import { ProcessSandbox } from './sandbox/pool.ts';
import type { JsonObject } from './sandbox/types.ts';
import { BotSchedules } from './bot-schedules.ts';
import { BundleHost } from './sdk-bots/bundle-host.ts';
import type { BundleHostOptions } from './sdk-bots/bundle-host.ts';
import { SdkBots } from './sdk-bots/sdk-bots.ts';
import { DevBotCalls } from './sdk-bots/dev-bot-calls.ts';
import { SdkIntegrations } from './sdk-bots/sdk-integrations.ts';
import { ChannelSender } from './channel-sender.ts';
import { TableComputer } from './table-computer.ts';
import { isPermanentFailure, reasonOf, UnitFailure } from './failures.ts';
import { Turn, unitName } from './turn.ts';

/** BotSchedules have minute resolution: looking every few seconds fires them on time. */
const SCHEDULE_TICK_MS = 5000;

export interface EngineOptions {
  /** Sandbox processes that run bot code. */
  sandboxProcesses: number;
  sandboxMaxMemoryMb: number;
  /** Turns worked on at once (of different conversations). */
  concurrency: number;
  /** Turns of one workspace worked on at once, at most. */
  workspaceConcurrency: number;
  /** Turns that may wait on a model without holding a place of `concurrency`. */
  waitingTurns: number;
  metrics: Metrics;
  /** How SDK bundles (bots' and integrations') are run. */
  sdkBots: BundleHostOptions;
  /** Where Parley bots' `fetch` may go. */
  botFetch: BotTargets;
  /** A dev bot's `url` may be a non-public address (PARLEY_DEV_BOT_PRIVATE_TARGETS). */
  devBotPrivateTargets: boolean;
}

/**
 * Turns events into bot work: it takes events off the queue and runs their turns, runs bots' own
 * actions for the action call, and fires bots' schedules. Bot code runs in the sandbox processes.
 */
export class Engine implements BotActionRunner {
  private readonly sandbox: ProcessSandbox;
  private readonly metrics: Metrics;
  private readonly bots: LoadedBots;
  private readonly client: BotClient;
  private readonly dispatcher: Dispatcher;
  readonly schedules: BotSchedules;
  private readonly tableComputer: TableComputer;
  private readonly bundles: BundleHost;
  private readonly sdkBots: SdkBots;
  private readonly sdkIntegrations: SdkIntegrations;
  private readonly channelSender: ChannelSender;
  private stopListening: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    options: EngineOptions,
  ) {
    this.sandbox = new ProcessSandbox({
      processes: options.sandboxProcesses,
      maxMemoryMb: options.sandboxMaxMemoryMb,
      logger: log,
      onRestart: () => options.metrics.sandboxRestarts.inc(),
      onCall: () => options.metrics.sandboxCalls.inc(),
    });
    options.metrics.sources.sandboxPids = () => this.sandbox.pids();
    this.bots = new LoadedBots(domain, (versionId) => {
      void this.sandbox
        .unload(versionId)
        .catch((err: unknown) => log.warn({ err, versionId }, 'could not unload a bot version'));
    });
    this.client = new BotClient(domain, new BotFetch(options.botFetch));
    this.metrics = options.metrics;
    this.dispatcher = new Dispatcher(domain, log, {
      concurrency: options.concurrency,
      workspaceConcurrency: options.workspaceConcurrency,
      waitingTurns: options.waitingTurns,
      turns: options.metrics.turns,
      process: (row, place) => this.process(row, place),
    });
    this.bundles = new BundleHost(domain, log, options.sdkBots);
    this.sdkBots = new SdkBots(domain, this.bundles, {
      calls: new DevBotCalls(domain.devTunnels, { allowPrivate: options.devBotPrivateTargets }),
      callTimeoutMs: options.sdkBots.callTimeoutMs,
    });
    this.sdkIntegrations = new SdkIntegrations(domain, this.bundles);
    this.channelSender = new ChannelSender(domain, log, (send) => this.sdkIntegrations.sendToChannel(send));
    domain.integrationHost.use(this.sdkIntegrations);
    this.schedules = new BotSchedules(domain, this.bots, log, (botId) => this.sdkBots.schedules(botId));
    this.tableComputer = new TableComputer(domain, this.sandbox, this.client, this.bots, log);
    domain.actions.useRunner(this);
  }

  async start(): Promise<void> {
    const stale = await this.domain.botKeys.deleteStaleRuntimeKeys();
    if (stale > 0) this.log.warn({ keys: stale }, 'deleted the keys of bundle processes an earlier run left');
    this.stopListening = [
      this.domain.bots.onDeploy((botId) => void this.sdkBots.register(botId)),
      this.domain.installations.onChange((changes) => void this.sdkIntegrations.changed(changes)),
    ];
    await this.bundles.start();
    this.domain.sdkRuntime.use(() => this.bundles.unavailable);
    this.stopListening.push(this.domain.bots.onDelete((botId) => void this.bundles.stopBot(botId)));
    await this.dispatcher.start();
    await this.channelSender.start();
    this.tableComputer.start();
    let ticking = false;
    this.timer = setInterval(() => {
      if (ticking) return;
      ticking = true;
      Promise.all([this.schedules.tick(), this.domain.outputs.prune()])
        .catch((err: unknown) => this.log.warn({ err }, 'schedules or cache pruning failed'))
        .finally(() => (ticking = false));
    }, SCHEDULE_TICK_MS);
  }

  async stop(): Promise<void> {
    for (const stop of this.stopListening) stop();
    clearInterval(this.timer);
    await this.dispatcher.stop();
    await this.channelSender.stop();
    await this.tableComputer.stop();
    await this.sandbox.close();
    await this.bundles.close();
  }

  /** One event's turn: a Parley package's, or an SDK bundle's handler. */
  private async process(row: ClaimedEvent, place: WorkPlace): Promise<TurnEnd> {
    const loaded = await this.bots.get(row.botId);
    if (!loaded) return { status: await this.sdkBots.deliver(row), recorded: false };
    const turn = new Turn(
      { domain: this.domain, sandbox: this.sandbox, client: this.client, serverLog: this.log, place },
      loaded,
      row,
    );
    try {
      const status = await turn.execute();
      return { status, recorded: turn.endRecorded };
    } catch (err) {
      // A failure that may pass leaves the dialog where it stands: the turn resumes there when tried again.
      if (isPermanentFailure(err)) await this.failTurn(loaded, turn, row, err);
      throw err;
    }
  }

  /** A turn that failed for good leaves its dialog where a new message can start over, and says why in the bot's logs. */
  private async failTurn(loaded: LoadedBot, turn: Turn, row: ClaimedEvent, err: unknown): Promise<void> {
    this.domain.botLogs.append(loaded.bot.botId, [
      {
        level: 'error',
        message: `The turn of event ${row.id} (${row.type}) failed: ${reasonOf(err)}`,
        ...(row.conversationId !== undefined && { conversationId: row.conversationId }),
        ...(row.userId !== undefined && { userId: row.userId }),
        eventId: row.id,
      },
    ]);
    turn.dialog.frames = [];
    turn.dialog.waiting = undefined;
    if (turn.dialog.turn) turn.dialog.turn.running = false;
    try {
      await turn.saveNow();
    } catch (saveErr) {
      // The event is marked failed all the same; the next message finds the dialog of the failed turn.
      this.log.error({ err: saveErr, eventId: row.id }, 'could not reset the dialog of a failed turn');
    }
  }

  /** A bot's own action; run on its own (a call through the API), it gets an event of its own. */
  async resolve(actor: BotActor, name: string): Promise<ResolvedAction | undefined> {
    const loaded = await this.bots.get(actor.botId);
    if (!loaded) return this.sdkBots.action(actor.botId, name);
    const definition = loaded.pkg.actions[name];
    if (!definition) return undefined;
    const unit = unitIds.action(name);
    return {
      versionId: loaded.program.versionId,
      input: definition.input,
      output: definition.output,
      ...(definition.cacheable && { cacheable: definition.cacheable }),
      run: (input) => this.runAction(loaded, actor, unit, name, input),
    };
  }

  /** An action of an integration installed on the bot. */
  resolveIntegration(actor: BotActor, alias: string, name: string): Promise<ResolvedAction | undefined> {
    return this.sdkIntegrations.action(actor, alias, name);
  }

  private async runAction(
    loaded: LoadedBot,
    actor: BotActor,
    unit: string,
    name: string,
    actionInput: JsonObject,
  ): Promise<JsonObject> {
    // The input passed the action's JSON Schema, as JSON: it is JSON.
    const input = actionInput;
    const event = actionEvent(actor.botId, name, input);
    // Called by bot code, the action is charged to its caller's chain; called from outside, it begins one.
    const calls = actor.calls ?? CallChain.root();
    const timer = this.metrics.actions.startTimer();
    const outcome = await this.sandbox
      .call(
        loaded.program,
        unit,
        { event, workflow: {}, conversation: {}, user: {}, bot: {}, env: loaded.env, turn: {}, input },
        this.client.handler(actor, calls),
      )
      .finally(() => calls.end());
    timer({ outcome: outcome.ok ? 'ok' : 'failed' });
    this.domain.botLogs.append(
      actor.botId,
      outcome.logs.map((l) => ({ ...l, timestamp: l.time })),
    );
    if (!outcome.ok) {
      const failure = new UnitFailure(
        unit,
        outcome.kind,
        `${unitName(unit)} failed (${outcome.kind}): ${outcome.message}`,
      );
      this.domain.botLogs.append(actor.botId, [{ level: 'error', message: failure.message }]);
      throw failure.toApiError();
    }
    const value = outcome.value;
    return value && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  }
}

/** The `event` of an action called through the API: the call itself. */
function actionEvent(botId: string, name: string, input: JsonObject): JsonObject {
  const now = new Date().toISOString();
  return {
    id: `evt_action_${Date.now().toString(36)}`,
    type: 'action_triggered',
    botId,
    direction: 'incoming',
    createdOn: now,
    payload: { type: name, input },
    preview: name,
    state: { dialog: null },
    kb: { included: [], results: [] },
    tags: { conversation: {}, user: {}, message: {} },
  };
}
