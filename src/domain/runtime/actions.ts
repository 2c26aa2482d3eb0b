import { createHash } from 'node:crypto';
import { createAjv } from '../shared/json-schema.ts';
import type { JsonObject } from '../shared/json.ts';
import type { ValidateFunction } from 'ajv';
import type { Store } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import type { BotActor } from '../workspace/actors.ts';
import { CHAT_INTEGRATION } from '../chat/channels.ts';
import { ApiError, invalidPayload, notFound } from '../shared/errors.ts';
import { fromJson, toJson } from '../shared/json.ts';
import type { ConversationLog } from '../live/conversation-log.ts';
import { requireOfBot } from '../shared/ownership.ts';
import { nowIso } from '../shared/time.ts';

/** A cacheable action's output for an input: read on every call of it. */
const readCachedOutput = prepare(['botId', 'key'], (db, { botId, key }: { botId: string; key: string }) =>
  db
    .selectFrom('action_cache')
    .select(['output', 'expires_at'])
    .where('bot_id', '=', botId)
    .where('key', '=', key),
);

const storeCachedOutput = prepare(
  ['botId', 'key', 'output', 'expiresAt'],
  (db, args: { botId: string; key: string; output: string; expiresAt: string }) =>
    db
      .insertInto('action_cache')
      .values({ bot_id: args.botId, key: args.key, output: args.output, expires_at: args.expiresAt })
      .onConflict((oc) =>
        oc.columns(['bot_id', 'key']).doUpdateSet({ output: args.output, expires_at: args.expiresAt }),
      ),
);

/** Cached outputs this process keeps in memory besides the store (the most recently read or written). */
const OUTPUTS_IN_MEMORY = 10_000;
/** A larger output is read from the store each time: memory holds many small outputs, not a few large ones. */
const LARGEST_OUTPUT_IN_MEMORY = 16_384;

/**
 * The outputs of cacheable actions this process read or wrote lately, until they expire. A cached output
 * never changes before it expires (its key names the deployed version and the input), so this process
 * may answer from memory what the store would answer; the store shares outputs across processes.
 */
class RecentOutputs {
  /** By bot and cache key. */
  private readonly entries = new Map<string, { json: string; expiresAt: string }>();

  get(botId: string, key: string, now: string): string | undefined {
    const slot = `${botId}:${key}`;
    const entry = this.entries.get(slot);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.json;
    this.entries.delete(slot);
    return undefined;
  }

  set(botId: string, key: string, json: string, expiresAt: string): void {
    if (json.length > LARGEST_OUTPUT_IN_MEMORY) return;
    const slot = `${botId}:${key}`;
    this.entries.delete(slot);
    if (this.entries.size >= OUTPUTS_IN_MEMORY) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(slot, { json, expiresAt });
  }
}

/** Longest `type` of an action call. */
export const ACTION_TYPE_MAX_LENGTH = 200;

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

/**
 * Bot code running in a turn, seen from the action call: the bot's own actions it calls run inside
 * the turn, with the turn's event and variables (the engine's Turn implements it).
 */
export interface TurnScope {
  runAction(name: string, input: JsonObject): Promise<JsonObject>;
}

export interface ActionResult {
  output: JsonObject;
  cached: boolean;
}

const ajv = createAjv();

/**
 * The action call: `name` runs the bot's own action (inside the caller's turn when bot code calls
 * it); `alias:name` an installed integration's (the built-in chat channel offers `chat:sendEvent`).
 * Input and output are checked against the action's schemas; a cacheable action answers a repeated
 * input from its cache within the TTL.
 */
export class Actions {
  private runner: BotActionRunner | undefined;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly recent = new RecentOutputs();

  constructor(
    private readonly store: Store,
    private readonly log: ConversationLog,
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
      const hit = await this.cached(actor.botId, key);
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
      await this.storeOutput(actor.botId, key, output, action.cacheable.ttlSeconds);
    return { output, cached: false };
  }

  /** Removes expired cache entries. */
  async pruneCache(now = nowIso()): Promise<void> {
    await this.store.db.deleteFrom('action_cache').where('expires_at', '<', now).execute();
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

  private async cached(botId: string, key: string): Promise<JsonObject | undefined> {
    const now = nowIso();
    const recent = this.recent.get(botId, key, now);
    if (recent !== undefined) return fromJson<JsonObject>(recent);
    const [row] = (await readCachedOutput.execute(this.store.db, { botId, key })).rows;
    if (!row || row.expires_at <= now) return undefined;
    this.recent.set(botId, key, row.output, row.expires_at);
    return fromJson<JsonObject>(row.output);
  }

  private async storeOutput(
    botId: string,
    key: string,
    output: JsonObject,
    ttlSeconds: number,
  ): Promise<void> {
    const json = toJson(output);
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000).toISOString();
    await storeCachedOutput.execute(this.store.db, { botId, key, output: json, expiresAt });
    this.recent.set(botId, key, json, expiresAt);
  }
}

/** The same input, whatever the order of its keys, gives the same key. */
function cacheKey(versionId: string, action: string, input: unknown): string {
  return createHash('sha256')
    .update(`${versionId}\0${action}\0${canonical(input)}`)
    .digest('hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as JsonObject)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
