import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import type { JsonObject } from '../domain/shared/json.ts';
import type { Domain } from '../domain/index.ts';
import type { LoadedBots } from './loaded-bot.ts';
import type { CompiledPackage } from '../package/format.ts';

export interface Schedule {
  /** Names the schedule (unique in its bot). */
  name: string;
  /** The type of the event it queues. */
  eventType: string;
  cron: string;
  payload: JsonObject;
}

/**
 * Fires bots' schedules: a Parley package's (its manifest's, a custom event of the schedule's name, and
 * workflows' schedule triggers, an event `schedule:<workflow>:<node>`) and an SDK bot's recurring events
 * (`sdkSchedules`). Each fire time is claimed in the store, so one process of several queues it, once.
 */
export class BotSchedules {
  constructor(
    private readonly domain: Domain,
    private readonly bots: LoadedBots,
    private readonly log: FastifyBaseLogger,
    private readonly sdkSchedules: (botId: string) => Promise<Schedule[] | undefined>,
  ) {}

  async tick(now = new Date()): Promise<void> {
    for (const botId of await this.domain.bots.withRuntime()) {
      let schedules: Schedule[] | undefined;
      try {
        const loaded = await this.bots.get(botId);
        schedules = loaded ? schedulesOf(loaded.pkg) : await this.sdkSchedules(botId);
      } catch (err) {
        // One bot's schedules wait for the next tick; the others' go on.
        this.log.warn({ err, botId }, 'could not load a bot to fire its schedules');
        continue;
      }
      for (const schedule of schedules ?? []) {
        try {
          await this.fire(botId, schedule, now);
        } catch (err) {
          this.log.warn({ err, botId, schedule: schedule.name }, 'schedule failed');
        }
      }
    }
  }

  private async fire(botId: string, schedule: Schedule, now: Date): Promise<void> {
    const cron = new Cron(schedule.cron, { timezone: 'UTC', paused: true });
    const key = `schedule:${botId}:${schedule.name}`;
    const last = await this.domain.settings.get(key);
    // The first look only notes the time: schedules fire from their deploy on, not for the past.
    if (last === undefined) {
      await this.domain.settings.compareAndSet(key, undefined, now.toISOString());
      return;
    }
    const due = cron.nextRun(new Date(last));
    if (!due || due > now) return;
    if (!(await this.domain.settings.compareAndSet(key, last, due.toISOString()))) return;
    await this.domain.events.queue(botId, { type: schedule.eventType, payload: schedule.payload });
  }
}

function schedulesOf(pkg: CompiledPackage): Schedule[] {
  const list: Schedule[] = Object.entries(pkg.manifest.schedules ?? {}).map(([name, s]) => ({
    name,
    eventType: name,
    cron: s.cron,
    payload: s.payload ?? {},
  }));
  for (const [workflow, definition] of Object.entries(pkg.workflows)) {
    for (const node of definition.nodes) {
      if (node.type === 'trigger' && node.trigger?.kind === 'schedule') {
        const eventType = `schedule:${workflow}:${node.id}`;
        list.push({ name: eventType, eventType, cron: node.trigger.cron, payload: {} });
      }
    }
  }
  return list;
}
