import type { Db } from '../../store/index.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { JsonObject } from '../shared/json.ts';
import { newId } from '../shared/ids.ts';
import { requireOfBot } from '../shared/ownership.ts';
import { toJson } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';

export interface Observation {
  id?: string;
  name: string;
  data: JsonObject;
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

  /** An observation may name records of the bot only (a record of another bot does not exist for it). */
  async observe(actor: BotActor, observation: Observation): Promise<void> {
    const { messageId, eventId, conversationId, userId } = observation;
    if (messageId !== undefined) await requireOfBot(this.db, 'messages', actor, messageId);
    if (eventId !== undefined) await requireOfBot(this.db, 'events', actor, eventId);
    if (conversationId !== undefined) await requireOfBot(this.db, 'conversations', actor, conversationId);
    if (userId !== undefined) await requireOfBot(this.db, 'users', actor, userId);
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
