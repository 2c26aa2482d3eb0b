// A bot's log lines, followed live as `parley logs --follow` does (from the last hour, polled every
// second while the page is visible), filtered by level and text; the filters live in the address.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { BotLog } from '../../api/types.ts';
import { LogTail } from '../../log-tail.ts';
import { paths } from '../../paths.ts';
import { ErrorView, Field, valueOf } from '../../ui/components.tsx';
import { usePolling } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';

const LEVELS = ['debug', 'info', 'warn', 'error'];
const SINCE: Record<string, number> = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
};

export function Logs({ bot }: BotScreenProps) {
  const { query, route, path } = useLocation();
  const level = LEVELS.includes(query.level ?? '') ? (query.level as string) : '';
  const text = query.q ?? '';
  const since = query.since && SINCE[query.since] ? query.since : '1h';
  const [draft, setDraft] = useState(text);
  useEffect(() => setDraft(text), [text]);

  const [lines, setLines] = useState<BotLog[]>([]);
  const [following, setFollowing] = useState(true);
  const [loaded, setLoaded] = useState(false);
  const tail = useMemo(
    () =>
      new LogTail(bot.id, new Date(Date.now() - (SINCE[since] ?? 3_600_000)).toISOString(), {
        ...(level && { level }),
        ...(text && { messageContains: text }),
      }),
    [bot.id, level, text, since],
  );
  const current = useRef(tail);
  current.current = tail;
  useEffect(() => {
    setLines([]);
    setLoaded(false);
  }, [tail]);

  const error = usePolling(
    async (signal) => {
      const polled = tail;
      const changed = await polled.poll(signal);
      // The filters may have changed while this poll ran: its lines are then of no use.
      if (signal.aborted || current.current !== polled) return;
      if (changed) setLines(polled.lines);
      setLoaded(true);
    },
    1000,
    following,
  );

  const set = (changes: Record<string, string>) => {
    const params = new URLSearchParams({
      ...(level && { level }),
      ...(text && { q: text }),
      ...(since !== '1h' && { since }),
      ...changes,
    });
    for (const [k, v] of [...params]) if (!v) params.delete(k);
    const search = params.toString();
    route(search ? `${path}?${search}` : path, true);
  };

  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (following) end.current?.scrollIntoView({ block: 'end' });
  }, [lines.length]);

  return (
    <section aria-label="Logs">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          set({ q: draft });
        }}
      >
        <Field label="Level">
          <select value={level} onChange={(e) => set({ level: valueOf(e) })}>
            <option value="">all levels</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l} only
              </option>
            ))}
          </select>
        </Field>
        <Field label="Text">
          <input type="search" value={draft} placeholder="contains…" onInput={(e) => setDraft(valueOf(e))} />
        </Field>
        <Field label="Since">
          <select value={since} onChange={(e) => set({ since: valueOf(e) })}>
            {Object.keys(SINCE).map((s) => (
              <option key={s} value={s}>
                last {s}
              </option>
            ))}
          </select>
        </Field>
        <div class="filter-buttons">
          <button type="submit">Filter</button>
          <button
            type="button"
            class="secondary"
            aria-pressed={following}
            onClick={() => setFollowing(!following)}
          >
            {following ? 'Pause' : 'Follow'}
          </button>
        </div>
      </form>
      <p class={`live ${error === undefined ? '' : 'offline'}`} role="status">
        {!following ? 'Paused' : error === undefined ? 'Following' : 'Reconnecting…'}
      </p>
      {error !== undefined && lines.length === 0 && <ErrorView error={error} />}
      {loaded && lines.length === 0 && error === undefined && (
        <p class="muted">
          No log lines {level || text ? 'match these filters ' : ''}in the last {since}. Lines appear here as
          the bot writes them (its <code>console.log</code> and failed turns).
        </p>
      )}
      <ol class="log-tail" aria-label="Log lines">
        {lines.map((l, i) => (
          <li key={i} class={`log level-${l.level}`}>
            <time dateTime={l.timestamp}>{new Date(l.timestamp).toLocaleTimeString()}</time>
            <span class="level">{l.level}</span>
            {l.conversationId && (
              <a
                class="conv"
                href={paths.conversation(bot.id, l.conversationId)}
                title="Open the conversation"
              >
                {l.conversationId.slice(-6)}
              </a>
            )}
            <span class="message">{l.message}</span>
          </li>
        ))}
      </ol>
      <div ref={end} />
    </section>
  );
}
