// A bot's conversations, newest first, filtered by participant, tag and date; the filters live in the
// address, so a filtered list can be bookmarked and shared.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { runtime } from '../../api/runtime.ts';
import type { ConversationFilters } from '../../api/runtime.ts';
import type { Conversation } from '../../api/types.ts';
import { paths } from '../../paths.ts';
import {
  EmptyState,
  ErrorView,
  Field,
  ListTable,
  Loading,
  Tags,
  Time,
  valueOf,
} from '../../ui/components.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import { oneLine } from '../../ui/payload.tsx';
import type { BotScreenProps } from './screen-props.ts';

interface Filters {
  user: string;
  tag: string;
  after: string;
  before: string;
}

const FILTER_KEYS: (keyof Filters)[] = ['user', 'tag', 'after', 'before'];

/** A date input's day as the start (or the end) of that day, local time. */
const dayBound = (day: string, end: boolean) =>
  new Date(`${day}T${end ? '23:59:59.999' : '00:00:00'}`).toISOString();

function toQuery(f: Filters): ConversationFilters {
  const [key, ...value] = f.tag.split('=');
  return {
    ...(f.user.trim() && { participantIds: [f.user.trim()] }),
    ...(key?.trim() && value.length > 0 && { tags: { [key.trim()]: value.join('=').trim() } }),
    ...(f.after && { afterDate: dayBound(f.after, false) }),
    ...(f.before && { beforeDate: dayBound(f.before, true) }),
  };
}

/** A user without a name, readably: the end of their id (the whole id in its title). */
const unnamed = (userId: string) => `Visitor …${userId.slice(-6)}`;

/**
 * Who a conversation is with and what was said last, read for its row: the Runtime API lists neither
 * with the conversations (two small reads a row, only for the rows shown).
 */
function Summary({ botId, conversation }: { botId: string; conversation: Conversation }) {
  const summary = useLoad(async () => {
    const [{ participants }, last] = await Promise.all([
      runtime.listParticipants(botId, conversation.id),
      runtime.lastMessage(botId, conversation.id),
    ]);
    return { people: participants.filter((p) => p.id !== botId), last };
  }, [botId, conversation.id, conversation.updatedAt]);
  const link = (label: ComponentChildren) => (
    <a href={paths.conversation(botId, conversation.id)} class="conversation-who">
      {label}
    </a>
  );
  if (!summary.data) return link(<span class="muted">…</span>);
  const { people, last } = summary.data;
  const names = people.map((p, i) => (
    <span key={p.id} title={p.id}>
      {i > 0 && ', '}
      {p.name ?? unnamed(p.id)}
    </span>
  ));
  return (
    <>
      {link(names.length === 0 ? <span class="muted">No participant</span> : names)}
      {last ? (
        <span class="last-message muted" title={oneLine(last.type, last.payload)}>
          {last.direction === 'outgoing' ? 'Bot: ' : ''}
          {oneLine(last.type, last.payload)} · <Time iso={last.createdAt} />
        </span>
      ) : (
        <span class="last-message muted">No messages yet</span>
      )}
    </>
  );
}

export function Conversations({ bot }: BotScreenProps) {
  const { query, route, path } = useLocation();
  const applied: Filters = {
    user: query.user ?? '',
    tag: query.tag ?? '',
    after: query.after ?? '',
    before: query.before ?? '',
  };
  const [draft, setDraft] = useState<Filters>(applied);
  const key = FILTER_KEYS.map((k) => applied[k]).join('\u0000');
  useEffect(() => setDraft(applied), [key]);

  const first = useLoad(() => runtime.listConversations(bot.id, toQuery(applied)), [bot.id, key]);
  const [more, setMore] = useState<{ items: Conversation[]; nextToken: string | undefined }>({
    items: [],
    nextToken: undefined,
  });
  useEffect(() => setMore({ items: [], nextToken: first.data?.meta.nextToken }), [first.data]);
  const loadMore = useAction(async () => {
    const page = await runtime.listConversations(bot.id, {
      ...toQuery(applied),
      ...(more.nextToken && { nextToken: more.nextToken }),
    });
    setMore({ items: [...more.items, ...page.conversations], nextToken: page.meta.nextToken });
  });

  const apply = (filters: Filters) => {
    const params = new URLSearchParams();
    for (const k of FILTER_KEYS) if (filters[k]) params.set(k, filters[k]);
    const text = params.toString();
    route(text ? `${path}?${text}` : path);
  };
  const filtered = FILTER_KEYS.some((k) => applied[k]);
  const conversations = [...(first.data?.conversations ?? []), ...more.items];

  return (
    <section aria-label="Conversations">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <Field label="User id">
          <input
            value={draft.user}
            placeholder="user_…"
            onInput={(e) => setDraft({ ...draft, user: valueOf(e) })}
          />
        </Field>
        <Field label="Tag">
          <input
            value={draft.tag}
            placeholder="key=value"
            onInput={(e) => setDraft({ ...draft, tag: valueOf(e) })}
          />
        </Field>
        <Field label="From">
          <input type="date" value={draft.after} onInput={(e) => setDraft({ ...draft, after: valueOf(e) })} />
        </Field>
        <Field label="To">
          <input
            type="date"
            value={draft.before}
            onInput={(e) => setDraft({ ...draft, before: valueOf(e) })}
          />
        </Field>
        <div class="filter-buttons">
          <button type="submit">Filter</button>
          {filtered && (
            <button
              type="button"
              class="secondary"
              onClick={() => apply({ user: '', tag: '', after: '', before: '' })}
            >
              Clear
            </button>
          )}
        </div>
      </form>
      {first.error !== undefined ? (
        <ErrorView error={first.error} retry={first.reload} />
      ) : first.loading && !first.data ? (
        <Loading />
      ) : conversations.length === 0 ? (
        <EmptyState title={filtered ? 'No conversation matches these filters' : 'No conversations yet'}>
          {!filtered && (
            <p>
              Conversations appear here as people talk to the bot. Start one in{' '}
              <a href={paths.botSection(bot.id, 'try')}>Try it</a>.
            </p>
          )}
        </EmptyState>
      ) : (
        <>
          <ListTable
            items={conversations}
            columns={[
              {
                label: 'Conversation',
                cell: (c) => (
                  <>
                    <Summary botId={bot.id} conversation={c} />
                    <Tags tags={c.tags} />
                  </>
                ),
              },
              { label: 'Messages', cell: (c) => c.messageCount },
              { label: 'Last activity', cell: (c) => <Time iso={c.updatedAt} /> },
              { label: 'Started', wide: true, cell: (c) => <Time iso={c.createdAt} /> },
              {
                label: 'Id',
                wide: true,
                cell: (c) => (
                  <a href={paths.conversation(bot.id, c.id)}>
                    <code>{c.id}</code>
                  </a>
                ),
              },
              { label: 'Channel', wide: true, cell: (c) => `${c.integration} / ${c.channel}` },
            ]}
          />
          {more.nextToken && (
            <button
              type="button"
              class="secondary"
              disabled={loadMore.busy}
              onClick={() => void loadMore.run()}
            >
              {loadMore.busy ? 'Loading…' : 'Load more'}
            </button>
          )}
          {loadMore.error !== undefined && (
            <ErrorView error={loadMore.error} retry={() => void loadMore.run()} />
          )}
        </>
      )}
    </section>
  );
}
