import { createAjv } from '../shared/json-schema.ts';
import type { JsonObject } from '../shared/json.ts';
import type { ValidateFunction } from 'ajv';
import type { Store } from '../../store/index.ts';
import type { BotActor } from '../workspace/actors.ts';
import { CHAT_INTEGRATION } from '../chat/channels.ts';
import { ApiError, invalidPayload, notFound } from '../shared/errors.ts';
import type { ConversationLog } from '../live/conversation-log.ts';
import { requireOfBot } from '../shared/ownership.ts';
import { nowIso } from '../shared/time.ts';
import { cacheKey } from '../shared/output-cache.ts';
import type { OutputCache } from '../shared/output-cache.ts';
import type { LlmIntegration } from '../llm/llm-integration.ts';
import type { HitlIntegration } from '../handoffs/hitl-integration.ts';

/** A bot's own action as its runtime describes it. */
export interface ResolvedAction {
  /** Identifies the deployed code: a cached output is valid for one version only. */
  versionId: string;
  input: JsonObject;
  output: JsonObject;
  cacheable?: { ttlSeconds: number };
  /** Runs the action on its own, with an event of its own (a call through the API). */
  run(input: JsonObject): Promise<JsonObject>;
}

/** The port through which the domain finds bots' own actions and their integrations': the engine implements it. */
export interface BotActionRunner {
  resolve(actor: BotActor, name: string): Promise<ResolvedAction | undefined>;
  /** An action of the integration the bot installed under `alias` (its name). */
  resolveIntegration(actor: BotActor, alias: string, name: string): Promise<ResolvedAction | undefined>;
}

export interface ActionResult {
  output: JsonObject;
  cached: boolean;
}

const ajv = createAjv();

/**
 * The action call: `name` runs the bot's own action (inside the caller's turn when bot code calls
 * it); `alias:name` an installed integration's (the built-in chat channel offers `chat:sendEvent`, the
 * built-in llm integration its two actions, under `llm` and the other aliases a bot gave it; the
 * built-in hitl integration its three, under `hitl`).
 * Input and output are checked against the action's schemas; a cacheable action answers a repeated
 * input from its cache within the TTL.
 */
export class Actions {
  private runner: BotActionRunner | undefined;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly store: Store,
    private readonly log: ConversationLog,
    private readonly outputs: OutputCache,
    private readonly llm: LlmIntegration,
    private readonly hitl: HitlIntegration,
  ) {}

  useRunner(runner: BotActionRunner): void {
    this.runner = runner;
  }

  async call(actor: BotActor, type: string, input: JsonObject): Promise<ActionResult> {
    const colon = type.indexOf(':');
    if (colon >= 0) {
      const alias = type.slice(0, colon);
      const name = type.slice(colon + 1);
      if (alias === CHAT_INTEGRATION && name === 'sendEvent')
        return { output: await this.sendChatEvent(actor, input), cached: false };
      if (await this.llm.handles(actor.botId, alias, name)) {
        // The gateway keeps its own cache of answers, and says when one came from it.
        return { output: await this.llm.call(actor, alias, name, input), cached: false };
      }
      if (this.hitl.handles(alias, name))
        return { output: await this.hitl.call(actor, name, input), cached: false };
      const action = this.runner && (await this.runner.resolveIntegration(actor, alias, name));
      if (!action) throw notFound('Action', type);
      return this.run(actor, type, action, input, (i) => action.run(i));
    }
    const action = this.runner && (await this.runner.resolve(actor, type));
    if (!action) throw notFound('Action', type);
    const { turn } = actor;
    return this.run(actor, type, action, input, (i) => (turn ? turn.runAction(type, i) : action.run(i)));
  }

  /** Runs a resolved action: its input and output checked, its output cached when it may be. */
  private async run(
    actor: BotActor,
    type: string,
    action: ResolvedAction,
    input: JsonObject,
    run: (input: JsonObject) => Promise<JsonObject>,
  ): Promise<ActionResult> {
    this.check(`${action.versionId}:${type}:input`, action.input, input, (m) => invalidPayload(`input ${m}`));
    const key = action.cacheable && cacheKey(action.versionId, type, input);
    if (key) {
      const hit = await this.outputs.get(actor.botId, key);
      if (hit) return { output: hit, cached: true };
    }
    const output = await run(input);
    this.check(
      `${action.versionId}:${type}:output`,
      action.output,
      output,
      (m) => new ApiError('Runtime', `The action "${type}" returned an invalid output: ${m}`),
    );
    if (key && action.cacheable)
      await this.outputs.set(actor.botId, key, output, action.cacheable.ttlSeconds);
    return { output, cached: false };
  }

  /** `chat:sendEvent`: a custom event from the bot to the conversation's listeners (not stored: its id is null). */
  private async sendChatEvent(actor: BotActor, input: JsonObject): Promise<JsonObject> {
    const { conversationId, payload } = input;
    if (typeof conversationId !== 'string') throw invalidPayload('input.conversationId must be a string');
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      throw invalidPayload('input.payload must be an object');
    }
    await requireOfBot(this.store.db, 'conversations', actor, conversationId);
    const signal = await this.store.db.transaction().execute((trx) =>
      this.log.record(trx, conversationId, {
        type: 'event_created',
        event: {
          id: null,
          createdAt: nowIso(),
          payload: payload,
          userId: actor.botId,
        },
        isBot: true,
      }),
    );
    this.log.publish([signal]);
    return {};
  }

  private check(key: string, schema: JsonObject, value: unknown, error: (message: string) => ApiError): void {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = ajv.compile(schema);
      this.validators.set(key, validate);
    }
    if (!validate(value)) {
      const first = validate.errors?.[0];
      throw error(`${first?.instancePath || ''} ${first?.message ?? 'is invalid'}`.trim());
    }
  }
}
