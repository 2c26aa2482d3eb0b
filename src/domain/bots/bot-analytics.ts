import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { LlmUsage } from '../llm/usage.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { ApiError } from '../shared/errors.ts';
import { requireBotOfWorkspace } from '../shared/ownership.ts';
import { requireRole } from '../workspace/roles.ts';
import { ANALYTICS_RECORDS_MAX } from './schemas.ts';
import type { AnalyticsInterval, BotAnalyticsRecord } from './schemas.ts';

/** Each period's length in milliseconds. */
export const ANALYTICS_INTERVALS: Record<AnalyticsInterval, number> = { hour: 3_600_000, day: 86_400_000 };

export interface BotAnalyticsQuery {
  /** Start of the window (inclusive): anything `Date` parses. */
  startDate: string;
  /** End of the window (exclusive). */
  endDate: string;
  /** Length of one record's period; default `day`. */
  interval?: AnalyticsInterval;
}

interface Period {
  start: string;
  end: string;
}

function parseDate(value: string, name: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new ApiError('InvalidQuery', `${name} must be an ISO 8601 date, got "${value}"`);
  return ms;
}

/** The window cut into periods of `interval`, from its start; the last one ends with the window. */
function periodsOf(query: BotAnalyticsQuery): Period[] {
  const start = parseDate(query.startDate, 'startDate');
  const end = parseDate(query.endDate, 'endDate');
  if (end <= start) throw new ApiError('InvalidQuery', 'endDate must be after startDate');
  const step = ANALYTICS_INTERVALS[query.interval ?? 'day'];
  const count = Math.ceil((end - start) / step);
  if (count > ANALYTICS_RECORDS_MAX) {
    throw new ApiError(
      'InvalidQuery',
      `The window holds ${count} periods of one ${query.interval ?? 'day'}; at most ${ANALYTICS_RECORDS_MAX} fit in one answer: shorten it or choose a longer interval`,
    );
  }
  return Array.from({ length: count }, (_, i) => ({
    start: new Date(start + i * step).toISOString(),
    end: new Date(Math.min(start + (i + 1) * step, end)).toISOString(),
  }));
}

const zeroSpread = () => ({ mean: 0, sd: 0, min: 0, max: 0 });

function emptyRecord(period: Period): BotAnalyticsRecord {
  return {
    startDateTimeUtc: period.start,
    endDateTimeUtc: new Date(Date.parse(period.end) - 1).toISOString(),
    returningUsers: 0,
    newUsers: 0,
    sessions: 0,
    messages: 0,
    userMessages: 0,
    botMessages: 0,
    events: 0,
    eventTypes: {},
    customEvents: {},
    llm: {
      calls: 0,
      errors: 0,
      inputTokens: 0,
      outputTokens: 0,
      latency: zeroSpread(),
      tokensPerSecond: zeroSpread(),
      cost: { sum: 0, ...zeroSpread() },
    },
    turns: { count: 0, failed: 0, durationMs: { p50: null, p99: null } },
  };
}

/** Postgres answers counts (bigint) and numerics as strings. */
const num = (value: unknown): number => Number(value ?? 0);

/** The window of a query as SQL fragments over a table aliased `t` with `bot_id` and a timestamp column. */
class Window {
  constructor(
    private readonly periods: Period[],
    private readonly botId: string,
  ) {}

  /** The periods as a table `p(i, s, e)`: joined on a row's timestamp, one pass groups a whole window. */
  get table(): RawBuilder<unknown> {
    return sql`p(i, s, e) as (values ${sql.join(this.periods.map((p, i) => sql`(${i}, ${p.start}, ${p.end})`))})`;
  }

  /** Joins each row of `t` to its period. */
  get join(): RawBuilder<unknown> {
    return sql`join p on t.created_at >= p.s and t.created_at < p.e`;
  }

  /** The bot's rows of `t` in the window (the range lets the (bot_id, created_at) index do the work). */
  get where(): RawBuilder<unknown> {
    const start = (this.periods[0] as Period).start;
    const end = (this.periods[this.periods.length - 1] as Period).end;
    return sql`t.bot_id = ${this.botId} and t.created_at >= ${start} and t.created_at < ${end}`;
  }
}

/**
 * A bot's activity per period, computed from what the store already holds (messages, users, events,
 * trackAnalytics counters): each figure is one grouped query over the window, in the database.
 */
export class BotAnalytics {
  constructor(
    private readonly store: Store,
    /** The model calls' records, some maybe still being written when asked. */
    private readonly usage: LlmUsage,
  ) {}

  async records(
    actor: WorkspaceActor,
    botId: string,
    query: BotAnalyticsQuery,
  ): Promise<BotAnalyticsRecord[]> {
    requireRole(actor.role, 'read');
    const periods = periodsOf(query);
    await requireBotOfWorkspace(this.store.db, actor, botId);

    const records = periods.map(emptyRecord);
    const at = (i: unknown): BotAnalyticsRecord => records[num(i)] as BotAnalyticsRecord;
    const w = new Window(periods, botId);

    const messages = await this.query<{
      i: unknown;
      incoming: unknown;
      outgoing: unknown;
      sessions: unknown;
    }>(sql`
      with ${w.table}
      select p.i as i,
        sum(case when t.direction = 'incoming' then 1 else 0 end) as incoming,
        sum(case when t.direction = 'outgoing' then 1 else 0 end) as outgoing,
        count(distinct t.conversation_id) as sessions
      from messages t ${w.join} where ${w.where} group by p.i`);
    for (const r of messages) {
      const record = at(r.i);
      record.userMessages = record.messages = num(r.incoming);
      record.botMessages = num(r.outgoing);
      record.sessions = num(r.sessions);
    }

    const returning = await this.query<{ i: unknown; n: unknown }>(sql`
      with ${w.table}
      select p.i as i, count(distinct t.user_id) as n
      from messages t ${w.join} join users u on u.id = t.user_id and u.created_at < p.s
      where ${w.where} and t.direction = 'incoming' group by p.i`);
    for (const r of returning) at(r.i).returningUsers = num(r.n);

    const users = await this.query<{ i: unknown; n: unknown }>(sql`
      with ${w.table}
      select p.i as i, count(*) as n from users t ${w.join} where ${w.where} group by p.i`);
    for (const r of users) at(r.i).newUsers = num(r.n);

    const events = await this.query<{ i: unknown; type: string; n: unknown }>(sql`
      with ${w.table}
      select p.i as i, t.type as type, count(*) as n from events t ${w.join} where ${w.where}
      group by p.i, t.type`);
    for (const r of events) {
      const record = at(r.i);
      record.eventTypes[r.type] = num(r.n);
      record.events += num(r.n);
    }

    const counters = await this.query<{ i: unknown; name: string; n: unknown }>(sql`
      with ${w.table}
      select p.i as i, t.name as name, sum(t.count) as n from analytics t ${w.join} where ${w.where}
      group by p.i, t.name`);
    for (const r of counters) at(r.i).customEvents[r.name] = num(r.n);

    await this.turns(w, records);
    await this.llmCalls(w, records);
    return records;
  }

  /**
   * Model calls through the gateway: counts and sums, and the spread of their latency, of the tokens
   * per second of the answered ones, and of their cost. A standard deviation is the square root of the
   * mean of squares less the square of the mean, each computed in the database.
   */
  private async llmCalls(w: Window, records: BotAnalyticsRecord[]): Promise<void> {
    await this.usage.settled();
    const tps = sql`case when t.error is null and t.latency_ms > 0 then t.output_tokens * 1000.0 / t.latency_ms end`;
    const rows = await this.query<Record<string, unknown>>(sql`
      with ${w.table}
      select p.i as i, count(*) as calls,
        sum(case when t.error is null then 0 else 1 end) as errors,
        sum(t.input_tokens) as input_tokens, sum(t.output_tokens) as output_tokens,
        avg(t.latency_ms) as latency_mean, avg(t.latency_ms * t.latency_ms) as latency_sq,
        min(t.latency_ms) as latency_min, max(t.latency_ms) as latency_max,
        avg(${tps}) as tps_mean, avg(${tps} * ${tps}) as tps_sq, min(${tps}) as tps_min, max(${tps}) as tps_max,
        sum(t.cost) as cost_sum, avg(t.cost) as cost_mean, avg(t.cost * t.cost) as cost_sq,
        min(t.cost) as cost_min, max(t.cost) as cost_max
      from llm_calls t ${w.join} where ${w.where} group by p.i`);
    for (const r of rows) {
      const spreadOf = (name: string) => {
        const mean = num(r[`${name}_mean`]);
        return {
          mean,
          sd: Math.sqrt(Math.max(0, num(r[`${name}_sq`]) - mean * mean)),
          min: num(r[`${name}_min`]),
          max: num(r[`${name}_max`]),
        };
      };
      (records[num(r.i)] as BotAnalyticsRecord).llm = {
        calls: num(r.calls),
        errors: num(r.errors),
        inputTokens: num(r.input_tokens),
        outputTokens: num(r.output_tokens),
        latency: spreadOf('latency'),
        tokensPerSecond: spreadOf('tps'),
        cost: { sum: num(r.cost_sum), ...spreadOf('cost') },
      };
    }
  }

  /**
   * Turns: the window's events the engine finished, and how long each took from queued (or due, when
   * scheduled) to done. Percentiles are nearest-rank, picked in the database with window functions.
   */
  private async turns(w: Window, records: BotAnalyticsRecord[]): Promise<void> {
    const since = sql`coalesce(t.scheduled_for, t.created_at)`;
    const durationMs = this.store.sql.millisecondsBetween(since, sql.ref('t.updated_at'));
    const ranked = await this.query<{
      i: unknown;
      ms: unknown;
      rn: unknown;
      n: unknown;
      failed: unknown;
    }>(sql`
      with ${w.table},
      d as (
        select p.i as i, ${durationMs} as ms, case when t.status = 'failed' then 1 else 0 end as failed
        from events t ${w.join} where ${w.where} and t.status in ('processed', 'failed')
      ),
      r as (
        select i, ms,
          row_number() over (partition by i order by ms) as rn,
          count(*) over (partition by i) as n,
          sum(failed) over (partition by i) as failed
        from d
      )
      select i, ms, rn, n, failed from r where rn = (n + 1) / 2 or rn = (99 * n + 99) / 100`);
    for (const r of ranked) {
      const turns = (records[num(r.i)] as BotAnalyticsRecord).turns;
      const n = num(r.n);
      const rank = num(r.rn);
      const ms = Math.max(0, Math.round(num(r.ms)));
      turns.count = n;
      turns.failed = num(r.failed);
      if (rank === Math.floor((n + 1) / 2)) turns.durationMs.p50 = ms;
      if (rank === Math.floor((99 * n + 99) / 100)) turns.durationMs.p99 = ms;
    }
  }

  private async query<R>(query: RawBuilder<unknown>): Promise<R[]> {
    return (await query.execute(this.store.db)).rows as R[];
  }
}
