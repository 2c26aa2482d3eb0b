import { randomBytes } from 'node:crypto';
import type { Db } from '../../store/index.ts';

/** Small named values the server keeps for itself (secrets it generated, schedule marks). */
export class Settings {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value;
  }

  /**
   * Sets `key` to `value` only if it still holds `expected` (undefined: only if absent). True when this
   * caller made the change: of several processes racing, exactly one wins.
   */
  async compareAndSet(key: string, expected: string | undefined, value: string): Promise<boolean> {
    if (expected === undefined) {
      const result = await this.db
        .insertInto('settings')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    }
    const result = await this.db
      .updateTable('settings')
      .set({ value })
      .where('key', '=', key)
      .where('value', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * A secret named `key`: generated at first use and kept here, so every process and every restart
   * agrees on it. Of several processes starting at once, one stores its secret; all use the stored one.
   */
  async generatedSecret(key: string): Promise<string> {
    const existing = await this.get(key);
    if (existing) return existing;
    await this.compareAndSet(key, undefined, randomBytes(32).toString('base64url'));
    const stored = await this.get(key);
    if (!stored) throw new Error(`the secret ${key} could not be stored`);
    return stored;
  }
}
