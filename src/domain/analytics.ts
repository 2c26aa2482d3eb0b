import type { Db } from '../store/index.ts';
import type { BotActor } from './actors.ts';
import { newId } from './ids.ts';
import { nowIso } from './time.ts';

/** Named counters a bot reports (`trackAnalytics`), kept per bot. */
export class Analytics {
  constructor(private readonly db: Db) {}

  async track(actor: BotActor, name: string, count: number): Promise<void> {
    await this.db
      .insertInto('analytics')
      .values({ id: newId('analytics'), bot_id: actor.botId, name, count, created_at: nowIso() })
      .execute();
  }
}
