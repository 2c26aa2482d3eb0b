// A bot's last day at a glance, from getBotAnalytics: messages per hour, failed turns, turn times, and its
// model calls (tokens, cost, latency).
import { admin } from '../../api/admin.ts';
import type { AnalyticsRecord } from '../../api/types.ts';
import { paths } from '../../paths.ts';
import { Loaded } from '../../ui/components.tsx';
import { useLoad } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';
import { AdmissionLine } from './admission.tsx';

const HOUR = 3_600_000;

/** The last 24 hours, in whole clock hours (the last one still going on). */
function lastDay(now = Date.now()): { startDate: string; endDate: string } {
  const start = Math.floor(now / HOUR) * HOUR - 23 * HOUR;
  return { startDate: new Date(start).toISOString(), endDate: new Date(now + 1).toISOString() };
}

function ms(value: number | null): string {
  if (value === null) return '–';
  return value < 1000 ? `${value} ms` : `${(value / 1000).toFixed(1)} s`;
}

function Stat(props: { label: string; value: string | number; warn?: boolean }) {
  return (
    <div class={`stat${props.warn ? ' warn' : ''}`}>
      <span class="value">{props.value}</span>
      <span class="label">{props.label}</span>
    </div>
  );
}

const hourOf = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/** A bar per hour (messages from users on those from the bot); a mark over an hour with failed turns. */
function HourlyChart(props: { records: AnalyticsRecord[] }) {
  const { records } = props;
  const peak = Math.max(1, ...records.map((r) => r.userMessages + r.botMessages));
  const percent = (n: number) => `${(n / peak) * 100}%`;
  return (
    <figure class="chart">
      <ol class="bars" aria-label="Messages per hour over the last day">
        {records.map((r) => (
          <li
            key={r.startDateTimeUtc}
            title={`${hourOf(r.startDateTimeUtc)}: ${r.userMessages} from users, ${r.botMessages} from the bot, ${r.turns.failed} failed turns`}
          >
            <span class="visually-hidden">
              {hourOf(r.startDateTimeUtc)}: {r.userMessages} from users, {r.botMessages} from the bot,{' '}
              {r.turns.failed} failed turns
            </span>
            {r.turns.failed > 0 && <span class="failed-mark" aria-hidden="true" />}
            <span class="bar-user" style={{ height: percent(r.userMessages) }} />
            <span class="bar-bot" style={{ height: percent(r.botMessages) }} />
          </li>
        ))}
      </ol>
      <div class="axis" aria-hidden="true">
        {records
          .filter((_, i) => i % 6 === 0)
          .map((r) => (
            <span key={r.startDateTimeUtc}>{hourOf(r.startDateTimeUtc)}</span>
          ))}
        <span>now</span>
      </div>
      <figcaption>
        <span class="key key-user" /> from users <span class="key key-bot" /> from the bot{' '}
        <span class="key key-failed" /> an hour with failed turns
      </figcaption>
    </figure>
  );
}

/** Dollars as a person reads a bill: cents, and fractions of a cent when that is all there is. */
function usd(value: number): string {
  return value === 0 || value >= 0.01 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`;
}

/** The day's model calls through the gateway (the `llm` block of the record). */
function ModelUsage(props: { llm: AnalyticsRecord['llm'] }) {
  const { llm } = props;
  if (llm.calls === 0) return <p class="muted">No model calls in the last 24 hours.</p>;
  return (
    <div class="stats" aria-label="Model calls">
      <Stat label="model calls" value={llm.calls} />
      <Stat label="model calls failed" value={llm.errors} warn={llm.errors > 0} />
      <Stat label="tokens in" value={llm.inputTokens} />
      <Stat label="tokens out" value={llm.outputTokens} />
      <Stat label="mean model latency" value={ms(Math.round(llm.latency.mean))} />
      <Stat label="model cost" value={usd(llm.cost.sum)} />
    </div>
  );
}

export function Overview({ bot }: BotScreenProps) {
  const loaded = useLoad(async () => {
    const window = lastDay();
    const [hours, day] = await Promise.all([
      admin.getBotAnalytics(bot.id, { ...window, interval: 'hour' }),
      admin.getBotAnalytics(bot.id, { ...window, interval: 'day' }),
    ]);
    return { hours: hours.records, day: day.records[0] };
  }, [bot.id]);
  return (
    <Loaded {...loaded}>
      {({ hours, day }) => (
        <section aria-labelledby="overview-title">
          <h2 id="overview-title">Last 24 hours</h2>
          {day && (
            <div class="stats">
              <Stat label="messages from users" value={day.userMessages} />
              <Stat label="messages from the bot" value={day.botMessages} />
              <Stat label="conversations" value={day.sessions} />
              <Stat label="turns" value={day.turns.count} />
              <Stat label="turns failed" value={day.turns.failed} warn={day.turns.failed > 0} />
              <Stat label="p50 turn time" value={ms(day.turns.durationMs.p50)} />
              <Stat label="p99 turn time" value={ms(day.turns.durationMs.p99)} />
            </div>
          )}
          <AdmissionLine />
          <HourlyChart records={hours} />
          {day && (
            <>
              <h3>Language models</h3>
              <ModelUsage llm={day.llm} />
            </>
          )}
          {day && day.turns.failed > 0 && (
            <p>
              <a href={`${paths.botSection(bot.id, 'logs')}?level=error`}>See the error lines in the logs</a>
            </p>
          )}
          {!bot.deployedAt && (
            <p class="muted">
              This bot has no code yet: deploy a bot folder to it with{' '}
              <code>npm run parley -- deploy &lt;folder&gt; --bot-id {bot.id}</code>.
            </p>
          )}
        </section>
      )}
    </Loaded>
  );
}
