import type { Role } from '../../value-sets.ts';
/**
 * Short-lived in-process caches of what almost every request reads: who a token is, and when a bot
 * last changed. A change made through this process clears them at once; another process's change is
 * seen within the TTL (a revoked token may work on another process for up to that long).
 */

export const CACHE_TTL_MS = 2000;
/** Verified chat keys kept at most: a visitor's every request presents one. */
const CHAT_KEYS = 50_000;

export class TtlMap<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  /** Counts deletions and clears: a read that spans one may have read what they invalidated. */
  private changes = 0;

  constructor(private readonly maxEntries = 10_000) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Kept for CACHE_TTL_MS, or until `until` (a time in ms) when one is given. */
  set(key: string, value: V, until = Date.now() + CACHE_TTL_MS): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until });
  }

  /**
   * The key's value, read through `load` when none is kept. What `load` answers (but undefined) is kept,
   * unless a key was deleted or the map cleared while it read: its read may predate the change, and a
   * revoked token would otherwise be accepted again for a TTL.
   */
  async through<L extends V | undefined>(key: string, load: () => Promise<L>): Promise<V | L> {
    const kept = this.get(key);
    if (kept !== undefined) return kept;
    const before = this.changes;
    const value = await load();
    if (value !== undefined && this.changes === before) this.set(key, value);
    return value;
  }

  delete(key: string): void {
    this.changes++;
    this.entries.delete(key);
  }

  clear(): void {
    this.changes++;
    this.entries.clear();
  }
}

export class Caches {
  /** Token hash -> what `Auth.authenticate` found (null: unknown token). */
  readonly principals = new TtlMap<unknown>();
  /** `account:bot` -> the bot's workspace and the account's role there, when the account may act as the bot. */
  readonly botAccess = new TtlMap<{ workspaceId: string; role: Role } | null>();
  /** Bot id -> its runtime stamp. */
  readonly botStamps = new TtlMap<unknown>();
  /** Webhook id -> its chat channel. */
  readonly channels = new TtlMap<unknown>();
  /**
   * `channel secret + user key` -> the user id a verified chat key names. Verifying an HS256 JWT with
   * WebCrypto costs 80 to 350 µs, more than the rest of a chat request's checks; the entry names the
   * secret it was verified with, so no change of it can leave a key valid here (ChatKeys say how long).
   */
  readonly chatKeys = new TtlMap<string>(CHAT_KEYS);

  /** A token, key, membership or bot was revoked or deleted: nothing cached about access holds. */
  accessChanged(): void {
    this.principals.clear();
    this.botAccess.clear();
  }

  botChanged(botId: string): void {
    this.botStamps.delete(botId);
    this.channels.clear();
    this.chatKeys.clear();
    this.accessChanged();
  }
}
