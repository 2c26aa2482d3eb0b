import { hash } from 'node:crypto';
import type { Store } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import { fromJson, toJson } from './json.ts';
import type { JsonObject } from './json.ts';
import { nowIso } from './time.ts';

/** A cached output for a key: read on every call that may be answered from the cache. */
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
 * The outputs this process read or wrote lately, until they expire. A cached output never changes
 * before it expires (its key names everything it depends on), so this process may answer from memory
 * what the store would answer; the store shares outputs across processes.
 */
class RecentOutputs {
  /** By bot and cache key; the expiry in epoch milliseconds (a hit costs no date formatting). */
  private readonly entries = new Map<string, { json: string; expiresAt: number }>();

  get(botId: string, key: string, now: number): string | undefined {
    const slot = `${botId}:${key}`;
    const entry = this.entries.get(slot);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.json;
    this.entries.delete(slot);
    return undefined;
  }

  set(botId: string, key: string, json: string, expiresAt: number): void {
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

/**
 * Outputs kept per bot for a while under a key: the answers of cacheable actions and of model calls
 * (and the ones an idempotency key names). The store keeps them for every process; expired ones are
 * pruned by the sweeper.
 */
export class OutputCache {
  private readonly recent = new RecentOutputs();

  constructor(private readonly store: Store) {}

  async get(botId: string, key: string): Promise<JsonObject | undefined> {
    const now = Date.now();
    const recent = this.recent.get(botId, key, now);
    if (recent !== undefined) return fromJson<JsonObject>(recent);
    const [row] = (await readCachedOutput.execute(this.store.db, { botId, key })).rows;
    if (!row) return undefined;
    const expiresAt = Date.parse(row.expires_at);
    if (!(expiresAt > now)) return undefined;
    this.recent.set(botId, key, row.output, expiresAt);
    return fromJson<JsonObject>(row.output);
  }

  async set(botId: string, key: string, output: JsonObject, ttlSeconds: number): Promise<void> {
    const json = toJson(output);
    const expiresAt = Date.now() + ttlSeconds * 1000;
    await storeCachedOutput.execute(this.store.db, {
      botId,
      key,
      output: json,
      expiresAt: new Date(expiresAt).toISOString(),
    });
    this.recent.set(botId, key, json, expiresAt);
  }

  /** Removes expired entries. */
  async prune(now = nowIso()): Promise<void> {
    await this.store.db.deleteFrom('action_cache').where('expires_at', '<', now).execute();
  }
}

/** A cache key of parts: the same parts, whatever the order of their objects' keys, give the same key. */
export function cacheKey(...parts: unknown[]): string {
  return hash('sha256', parts.map(canonical).join('\0'), 'hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(Reflect.get(value, k))}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
