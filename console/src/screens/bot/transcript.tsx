// One conversation as it happened: every message and event in order, rendered as a person sees them,
// each turn with its log lines beside it and a failed turn marked with its reason. Live: it polls the
// Runtime API (messages, events) and the logs every second while the page is visible.
import { useEffect, useRef, useState } from 'preact/hooks';
import { collect } from '../../../../src/contract/client.ts';
import { MAX_LISTED } from '../../api/client.ts';
import { runtime } from '../../api/runtime.ts';
import type { BotEvent, BotLog, Conversation, Message } from '../../api/types.ts';
import { LogTail } from '../../log-tail.ts';
import { paths } from '../../paths.ts';
import { ErrorView, Loading, Time } from '../../ui/components.tsx';
import { Payload } from '../../ui/payload.tsx';
import { useLoad, usePolling } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';

const POLL_MS = 1000;
/** Messages can be committed a little out of order: each poll reads again from this far back. */
const MESSAGE_LOOKBACK_MS = 5000;

const byTime = <T extends { createdAt: string; id: string }>(a: T, b: T) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

interface Turn {
  /** What started the turn: an incoming message or an event (none for replies before any). */
  message?: Message;
  event?: BotEvent;
  replies: Message[];
  logs: BotLog[];
  /** When the turn began: the event's creation, or the message's. */
  at: string;
}

/**
 * Messages and events in order, cut into turns. Each reply and each log line goes to the turn of the
 * event it names (`eventId`: the server ties what a turn sends and logs to its event), since the turns
 * of one conversation overlap when messages come faster than the bot answers. What names no event
 * shown here (a message sent through the API, lines of older versions) goes by time: to the turn
 * begun last before it.
 */
export function turnsOf(messages: Message[], events: BotEvent[], logs: BotLog[]): Turn[] {
  const eventOfMessage = new Map(events.filter((e) => e.messageId).map((e) => [e.messageId, e]));
  const messageIds = new Set(messages.map((m) => m.id));
  const shownEventIds = new Set(events.map((e) => e.id));
  const linked = (eventId: string | undefined): eventId is string =>
    eventId !== undefined && shownEventIds.has(eventId);
  type Entry = { createdAt: string; id: string; message?: Message; event?: BotEvent };
  const entries: Entry[] = [
    ...messages
      .filter((m) => !(m.direction === 'outgoing' && linked(m.eventId)))
      .map((m) => ({ createdAt: m.createdAt, id: m.id, message: m })),
    // Events of messages show with their message; the others (custom events, ...) on their own.
    ...events
      .filter((e) => !(e.messageId && messageIds.has(e.messageId)))
      .map((e) => ({ createdAt: e.createdAt, id: e.id, event: e })),
  ].sort(byTime);
  const turns: Turn[] = [];
  for (const entry of entries) {
    const { message, event } = entry;
    if (message && message.direction === 'outgoing') {
      let last = turns[turns.length - 1];
      if (!last) turns.push((last = { replies: [], logs: [], at: message.createdAt }));
      last.replies.push(message);
      continue;
    }
    const started = message ? eventOfMessage.get(message.id) : event;
    turns.push({
      ...(message && { message }),
      ...(started && { event: started }),
      replies: [],
      logs: [],
      at: started?.createdAt ?? entry.createdAt,
    });
  }
  const turnOfEvent = new Map<string, Turn>();
  for (const turn of turns) if (turn.event) turnOfEvent.set(turn.event.id, turn);
  const byTimeline = (at: string): Turn | undefined => {
    let owner = turns[0];
    for (const turn of turns) if (turn.at <= at) owner = turn;
    return owner;
  };
  for (const reply of messages) {
    if (reply.direction !== 'outgoing' || !linked(reply.eventId)) continue;
    turnOfEvent.get(reply.eventId)?.replies.push(reply);
  }
  for (const turn of turns) turn.replies.sort(byTime);
  for (const line of logs) {
    const owner = (line.eventId !== undefined && turnOfEvent.get(line.eventId)) || byTimeline(line.timestamp);
    owner?.logs.push(line);
  }
  return turns;
}

/** A duration as people read it: `850 ms`, `1.2 s`. */
function durationText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The model and tool calls of a turn, folded into one row that opens to their log lines. */
export function CallsRow({ calls }: { calls: BotLog[] }) {
  if (calls.length === 0) return null;
  const models = calls.filter((l) => l.call?.kind === 'model').length;
  const tools = calls.filter((l) => l.call?.kind === 'tool').length;
  const ms = calls.reduce((sum, l) => sum + (l.call?.durationMs ?? 0), 0);
  const counts = [models > 0 && plural(models, 'model call'), tools > 0 && plural(tools, 'tool call')];
  return (
    <details class="turn-calls">
      <summary>
        {counts.filter(Boolean).join(', ')}, {durationText(ms)}
      </summary>
      <LogLines logs={calls} label="Model and tool calls of this turn" />
    </details>
  );
}

function TurnStatus({ event }: { event: BotEvent | undefined }) {
  if (!event) return null;
  switch (event.status) {
    case 'failed':
      return (
        <p class="turn-failed" role="note">
          <strong>Turn failed:</strong> {event.failureReason ?? 'no reason recorded'}
        </p>
      );
    case 'pending':
    case 'scheduled':
      return <span class="badge">{event.status}…</span>;
    case 'ignored':
    case 'canceled':
      return <span class="badge">{event.status}</span>;
    default:
      return null;
  }
}

function Bubble({ message, botId }: { message: Message; botId: string }) {
  const fromBot = message.direction === 'outgoing' || message.userId === botId;
  return (
    <div class={`bubble ${fromBot ? 'from-bot' : 'from-user'}`} data-message-id={message.id}>
      <span class="who">
        {fromBot ? 'Bot' : <code title="user id">{message.userId}</code>} · <Time iso={message.createdAt} />
      </span>
      <Payload type={message.type} payload={message.payload} />
    </div>
  );
}

export function LogLines({ logs, label = 'Log lines of this turn' }: { logs: BotLog[]; label?: string }) {
  if (logs.length === 0) return <p class="muted no-logs">no log lines</p>;
  return (
    <ol class="log-lines" aria-label={label}>
      {logs.map((l, i) => (
        <li key={i} class={`log level-${l.level}`}>
          <span class="level">{l.level}</span> <span class="message">{l.message}</span>
        </li>
      ))}
    </ol>
  );
}

export function Transcript({ bot, conversationId }: BotScreenProps & { conversationId: string }) {
  const [messages, setMessages] = useState<Map<string, Message>>(new Map());
  const [events, setEvents] = useState<Map<string, BotEvent>>(new Map());
  const [logs, setLogs] = useState<BotLog[]>([]);
  const [truncated, setTruncated] = useState(false);
  const tail = useRef<LogTail | undefined>(undefined);

  const initial = useLoad(async () => {
    const { conversation } = await runtime.getConversation(bot.id, conversationId);
    const [allMessages, allEvents] = await Promise.all([
      collect(
        (query: { conversationId: string; nextToken?: string }) => runtime.listMessages(bot.id, query),
        'messages',
        { conversationId },
        MAX_LISTED,
      ),
      collect(
        (query: { conversationId: string; nextToken?: string }) => runtime.listEvents(bot.id, query),
        'events',
        { conversationId },
        MAX_LISTED,
      ),
    ]);
    tail.current = new LogTail(bot.id, conversation.createdAt, { conversationId });
    await tail.current.poll();
    setMessages(new Map(allMessages.items.map((m) => [m.id, m])));
    setEvents(new Map(allEvents.items.map((e) => [e.id, e])));
    setLogs(tail.current.lines);
    setTruncated(!allMessages.complete || !allEvents.complete);
    return conversation satisfies Conversation;
  }, [bot.id, conversationId]);

  const pollError = usePolling(
    async (signal) => {
      const newest = [...messages.values()].reduce((max, m) => (m.createdAt > max ? m.createdAt : max), '');
      const afterDate = newest ? new Date(Date.parse(newest) - MESSAGE_LOOKBACK_MS).toISOString() : undefined;
      const [fresh, recent] = await Promise.all([
        runtime.listMessages(bot.id, { conversationId, ...(afterDate && { afterDate }) }, signal),
        runtime.listEvents(bot.id, { conversationId }, signal),
      ]);
      const logsChanged = await tail.current?.poll(signal);
      if (signal.aborted) return;
      if (fresh.messages.some((m) => !messages.has(m.id))) {
        setMessages((current) => new Map([...current, ...fresh.messages.map((m) => [m.id, m] as const)]));
      }
      if (recent.events.some((e) => events.get(e.id)?.status !== e.status)) {
        setEvents((current) => new Map([...current, ...recent.events.map((e) => [e.id, e] as const)]));
      }
      if (logsChanged && tail.current) setLogs(tail.current.lines);
    },
    POLL_MS,
    initial.data !== undefined,
  );

  // Stays at the bottom while the operator is there, as a chat does.
  const end = useRef<HTMLDivElement>(null);
  const count = messages.size + logs.length;
  useEffect(() => {
    const bottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 120;
    if (bottom) end.current?.scrollIntoView({ block: 'end' });
  }, [count]);

  if (initial.error !== undefined) return <ErrorView error={initial.error} retry={initial.reload} />;
  if (!initial.data) return <Loading what="Loading the conversation" />;
  const conversation = initial.data;
  const turns = turnsOf([...messages.values()], [...events.values()], logs);

  return (
    <section aria-label="Transcript">
      <div class="transcript-head">
        <p>
          <a href={paths.botSection(bot.id, 'conversations')}>← Conversations</a> ·{' '}
          <code>{conversation.id}</code> · {conversation.integration}/{conversation.channel} · started{' '}
          <Time iso={conversation.createdAt} />
        </p>
        <p class={`live ${pollError === undefined ? '' : 'offline'}`} role="status">
          {pollError === undefined ? 'Live' : 'Reconnecting…'}
        </p>
      </div>
      {truncated && <p class="muted">Only the latest {MAX_LISTED} messages and events are shown.</p>}
      {turns.length === 0 ? (
        <p class="muted">No messages in this conversation yet. New ones appear here as they come.</p>
      ) : (
        <ol class="transcript">
          {turns.map((turn, i) => (
            <li
              key={turn.event?.id ?? turn.message?.id ?? `start-${i}`}
              class={`turn${turn.event?.status === 'failed' ? ' failed' : ''}`}
              data-event-id={turn.event?.id}
            >
              <div class="turn-chat">
                {turn.message && <Bubble message={turn.message} botId={bot.id} />}
                {!turn.message && turn.event && (
                  <div class="event-row">
                    event <code>{turn.event.type}</code> · <Time iso={turn.event.createdAt} />
                  </div>
                )}
                <TurnStatus event={turn.event} />
                <CallsRow calls={turn.logs.filter((l) => l.call)} />
                {turn.replies.map((m) => (
                  <Bubble key={m.id} message={m} botId={bot.id} />
                ))}
              </div>
              <div class="turn-logs">
                <LogLines logs={turn.logs.filter((l) => !l.call)} />
              </div>
            </li>
          ))}
        </ol>
      )}
      <div ref={end} />
    </section>
  );
}
