import type { FastifyBaseLogger } from 'fastify';
import type { BotActor } from '../domain/actors.ts';
import type { BotActionRunner, ResolvedAction } from '../domain/actions.ts';
import type { Domain } from '../domain/index.ts';
import { toEvent } from '../domain/events.ts';
import type { EventsTable } from '../store/schema.ts';
import { Dispatcher } from './dispatcher.ts';
import { hostHandler, runtimeOperations } from './host.ts';
import type { RuntimeOperations } from './host.ts';
import { LoadedBots } from './loaded-bot.ts';
import type { LoadedBot } from './loaded-bot.ts';
import { unitIds } from './package/format.ts';
import { ProcessSandbox } from './sandbox/pool.ts';
import type { JsonObject, Sandbox } from './sandbox/types.ts';
import { Schedules } from './schedules.ts';
import { Turn, UnitFailure, unitName } from './turn.ts';

/** Schedules have minute resolution: looking every few seconds fires them on time. */
const SCHEDULE_TICK_MS = 5000;

export interface EngineOptions {
  /** Sandbox processes that run bot code. */
  sandboxProcesses: number;
  /** Turns worked on at once (of different conversations). */
  concurrency: number;
}

/**
 * Turns events into bot work: it takes events off the queue and runs their turns, runs bots' own
 * actions for the action call, and fires bots' schedules. Bot code runs in the sandbox processes.
 */
export class Engine implements BotActionRunner {
  private readonly sandbox: Sandbox;
  private readonly bots: LoadedBots;
  private readonly operations: RuntimeOperations;
  private readonly dispatcher: Dispatcher;
  readonly schedules: Schedules;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
    options: EngineOptions,
  ) {
    this.sandbox = new ProcessSandbox({ processes: options.sandboxProcesses, logger: log });
    this.bots = new LoadedBots(domain, (versionId) => {
      void this.sandbox
        .unload(versionId)
        .catch((err: unknown) => log.warn({ err, versionId }, 'could not unload a bot version'));
    });
    this.operations = runtimeOperations(domain, async (actor, type, input) => {
      return (await domain.actions.call(actor, type, input)).output;
    });
    this.dispatcher = new Dispatcher(domain, log, {
      concurrency: options.concurrency,
      process: (row) => this.process(row),
    });
    this.schedules = new Schedules(domain, this.bots, log);
    domain.actions.useRunner(this);
  }

  async start(): Promise<void> {
    await this.dispatcher.start();
    let ticking = false;
    this.timer = setInterval(() => {
      if (ticking) return;
      ticking = true;
      Promise.all([this.schedules.tick(), this.domain.actions.pruneCache()])
        .catch((err: unknown) => this.log.warn({ err }, 'schedules or cache pruning failed'))
        .finally(() => (ticking = false));
    }, SCHEDULE_TICK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.dispatcher.stop();
    await this.sandbox.close();
  }

  /** One event's turn. A bot with no code to run here leaves its events to be processed later. */
  private async process(row: EventsTable): Promise<'processed' | 'ignored'> {
    const loaded = await this.bots.get(row.bot_id);
    if (!loaded) return 'ignored';
    const turn = new Turn(
      { domain: this.domain, sandbox: this.sandbox, operations: this.operations },
      loaded,
      toEvent(row),
    );
    try {
      return await turn.execute();
    } catch (err) {
      await this.failTurn(loaded, turn, row, err);
      throw err;
    }
  }

  /** A turn that failed leaves its dialog where a new message can start over, and says why in the bot's logs. */
  private async failTurn(loaded: LoadedBot, turn: Turn, row: EventsTable, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    await this.domain.botLogs
      .write(loaded.bot.botId, [
        {
          level: 'error',
          message: `The turn of event ${row.id} (${row.type}) failed: ${message}`,
          ...(row.conversation_id && { conversationId: row.conversation_id }),
          ...(row.user_id && { userId: row.user_id }),
        },
      ])
      .catch(() => undefined);
    turn.dialog.frames = [];
    turn.dialog.waiting = undefined;
    if (turn.dialog.turn) turn.dialog.turn.running = false;
    await turn.save().catch(() => undefined);
  }

  /** A bot's own action: from a card, in that turn's context; from the API, with an event of its own. */
  async resolve(actor: BotActor, name: string, context?: unknown): Promise<ResolvedAction | undefined> {
    const loaded = await this.bots.get(actor.botId);
    const definition = loaded?.pkg.actions[name];
    if (!loaded || !definition) return undefined;
    const unit = unitIds.action(name);
    return {
      versionId: loaded.program.versionId,
      input: definition.input,
      output: definition.output,
      ...(definition.cacheable && { cacheable: definition.cacheable }),
      run: async (input) => {
        if (context instanceof Turn)
          return (await context.run(unit, { input: input as JsonObject })) as Record<string, unknown>;
        return this.runAction(loaded, actor, unit, name, input as JsonObject);
      },
    };
  }

  private async runAction(
    loaded: LoadedBot,
    actor: BotActor,
    unit: string,
    name: string,
    input: JsonObject,
  ): Promise<Record<string, unknown>> {
    const event = actionEvent(actor.botId, name, input);
    const host = hostHandler(
      this.operations,
      actor,
      async (a, type, i) => (await this.domain.actions.call(a, type, i)).output,
    );
    const outcome = await this.sandbox.call(
      loaded.program,
      unit,
      { event, workflow: {}, conversation: {}, user: {}, bot: {}, env: loaded.env, turn: {}, input },
      host,
    );
    if (outcome.logs.length > 0) {
      await this.domain.botLogs.write(
        actor.botId,
        outcome.logs.map((l) => ({ ...l, timestamp: l.time })),
      );
    }
    if (!outcome.ok) {
      const failure = new UnitFailure(
        unit,
        outcome.kind,
        `${unitName(unit)} failed (${outcome.kind}): ${outcome.message}`,
      );
      await this.domain.botLogs
        .write(actor.botId, [{ level: 'error', message: failure.message }])
        .catch(() => undefined);
      throw failure.toApiError();
    }
    const value = outcome.value;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
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
