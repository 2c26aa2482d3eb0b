import type { Db } from '../store/index.ts';
import type { BotActor } from './actors.ts';
import { newId } from './ids.ts';
import { toJson } from './json.ts';
import { nowIso } from './time.ts';

export interface Observation {
  id?: string;
  name: string;
  data: Record<string, unknown>;
  messageId?: string;
  eventId?: string;
  conversationId?: string;
  userId?: string;
  errorId?: string;
  traceId?: string;
}

/** What a bot reports about itself: named counters (`trackAnalytics`) and observations. */
export class Analytics {
  constructor(private readonly db: Db) {}

  async track(actor: BotActor, name: string, count: number): Promise<void> {
    await this.db
      .insertInto('analytics')
      .values({ id: newId('analytics'), bot_id: actor.botId, name, count, created_at: nowIso() })
      .execute();
  }

  async observe(actor: BotActor, observation: Observation): Promise<void> {
    await this.db
      .insertInto('observations')
      .values({
        id: newId('observation'),
        bot_id: actor.botId,
        name: observation.name,
        data: toJson(observation),
        created_at: nowIso(),
      })
      .execute();
  }
}
