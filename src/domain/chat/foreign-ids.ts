import { randomUUID } from 'node:crypto';
import { prepare } from '../../store/prepared.ts';
import type { Executor } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import type { ForeignKind } from '../../store/schema.ts';
import { alreadyExists, invalidPayload } from '../shared/errors.ts';
import { FOREIGN_ID_MAX_LENGTH } from './schemas.ts';

export type { ForeignKind };

/** On every chat request: the record a client-chosen id names. */
const internalIdOf = prepare(
  ['botId', 'kind', 'foreignId'],
  (db, { botId, kind, foreignId }: { botId: string; kind: ForeignKind; foreignId: string }) =>
    db
      .selectFrom('chat_ids')
      .select('internal_id')
      .where('bot_id', '=', botId)
      .where('kind', '=', kind)
      .where('foreign_id', '=', foreignId),
);

/** How many internal ids' foreign ids one process remembers. */
const FOREIGN_CACHE_ENTRIES = 100_000;

/** Letters, digits, `_`, `-`, `\` and `/`. */
export const FOREIGN_ID_PATTERN = new RegExp(`^[a-zA-Z0-9_\\-\\\\/]{1,${FOREIGN_ID_MAX_LENGTH}}$`);

export function validateForeignId(id: string, kind: ForeignKind): void {
  if (!FOREIGN_ID_PATTERN.test(id)) {
    throw invalidPayload(
      `The ${kind} id "${id}" is invalid: use at most ${FOREIGN_ID_MAX_LENGTH} characters among letters, digits, "_", "-", "\\" and "/"`,
    );
  }
}

/**
 * The ids Chat API clients choose (or are given) for users and conversations, mapped per bot to
 * Parley's internal ids, which never reach those clients.
 */
export class ForeignIds {
  /**
   * Internal id -> foreign id (itself when it has none). A record's mapping is made in the transaction
   * that creates it and never changes, and internal ids are never reused: what was read once holds.
   */
  private readonly foreignCache = new Map<string, string>();

  /** Records the mapping; a foreign id already taken in this bot is a 409. */
  async assign(
    db: Executor,
    botId: string,
    kind: ForeignKind,
    foreignId: string,
    internalId: string,
  ): Promise<void> {
    try {
      await db
        .insertInto('chat_ids')
        .values({ bot_id: botId, kind, foreign_id: foreignId, internal_id: internalId })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw alreadyExists(`A ${kind} with the id "${foreignId}" already exists`);
      throw err;
    }
  }

  /** A fresh foreign id for a client that chose none: random, unrelated to the internal id. */
  generate(): string {
    return randomUUID();
  }

  async internalOf(
    db: Executor,
    botId: string,
    kind: ForeignKind,
    foreignId: string,
  ): Promise<string | undefined> {
    const { rows } = await internalIdOf.execute(db, { botId, kind, foreignId });
    return rows[0]?.internal_id;
  }

  /** The foreign ids of records, or their own ids for records made outside the Chat API. */
  async foreignOfMany(db: Executor, internalIds: string[]): Promise<Map<string, string>> {
    const map = new Map<string, string>();
    const unknown: string[] = [];
    for (const id of internalIds) {
      const cached = this.foreignCache.get(id);
      if (cached === undefined) unknown.push(id);
      else map.set(id, cached);
    }
    if (unknown.length === 0) return map;
    for (const id of unknown) map.set(id, id);
    const rows = await db
      .selectFrom('chat_ids')
      .select(['foreign_id', 'internal_id'])
      .where('internal_id', 'in', unknown)
      .execute();
    for (const row of rows) map.set(row.internal_id, row.foreign_id);
    if (this.foreignCache.size + unknown.length > FOREIGN_CACHE_ENTRIES) this.foreignCache.clear();
    for (const id of unknown) this.foreignCache.set(id, map.get(id) ?? id);
    return map;
  }

  async forget(db: Executor, internalIds: string[]): Promise<void> {
    if (internalIds.length === 0) return;
    await db.deleteFrom('chat_ids').where('internal_id', 'in', internalIds).execute();
  }
}
