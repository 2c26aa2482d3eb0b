import type { Db } from '../store/index.ts';

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
}
