// One handoff: why the bot handed over, the conversation so far (live), and, for a member who may answer,
// taking it, answering, passing it to a colleague and resolving it. Everyone else reads.
import { useEffect, useRef, useState } from 'preact/hooks';
import { collect } from '../../../../src/contract/client.ts';
import { admin } from '../../api/admin.ts';
import { MAX_LISTED } from '../../api/client.ts';
import { handoffs } from '../../api/handoffs.ts';
import type { Handoff, HandoffDetail } from '../../api/handoffs.ts';
import { runtime } from '../../api/runtime.ts';
import type { Member, Message } from '../../api/types.ts';
import { useAction, useLoad, usePolling } from '../../hooks.ts';
import { paths } from '../../paths.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import { ErrorView, InlineError, Loading, PageHeader, Time, valueOf } from '../../ui/components.tsx';
import { Payload } from '../../ui/payload.tsx';
import { Composer } from './composer.tsx';
import { useQueue } from './queue.tsx';

/** How often the handoff's conversation is read again: the visitor's messages appear this fast. */
const POLL_MS = 1500;

const STATUS_LABEL: Record<Handoff['status'], string> = {
  pending: 'waiting',
  assigned: 'assigned',
  resolved: 'resolved',
  timed_out: 'timed out',
};

const isOpen = (h: Handoff) => h.status === 'pending' || h.status === 'assigned';

/** Who wrote a message: the visitor, an agent (by the name the visitor sees), or the bot. */
function authorOf(message: Message, names: Map<string, string>, visitorId: string | undefined): string {
  if (message.direction === 'incoming') return names.get(message.userId) ?? 'Visitor';
  if (message.userId === visitorId) return 'Visitor';
  return names.get(message.userId) ?? 'Bot';
}

function Conversation({ detail, names }: { detail: HandoffDetail; names: Map<string, string> }) {
  const { handoff, messages } = detail;
  // The newest message in sight, as a chat shows it: the box scrolls when one arrives.
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [messages.length]);
  return (
    <ol class="chat handoff-chat" aria-live="polite" aria-label="Conversation" ref={list}>
      {messages.map((m) => {
        const author = authorOf(m, names, handoff.userId);
        const side = m.direction === 'incoming' ? 'visitor' : author === 'Bot' ? 'bot' : 'agent';
        return (
          <li key={m.id} class={`bubble ${side}`}>
            <span class="who">
              {author} · <Time iso={m.createdAt} />
            </span>
            <Payload type={m.type} payload={m.payload} />
          </li>
        );
      })}
    </ol>
  );
}

/** Members who may answer handoffs, but the signed-in one: whom a handoff can be passed to. */
const colleaguesOf = (members: Member[], me: string) =>
  members.filter((m) => m.userId !== me && can(m.role, 'handoffs.answer'));

function Transfer({ handoff, onDone }: { handoff: Handoff; onDone: (h: Handoff) => void }) {
  const session = useCurrentSession();
  const members = useLoad(
    () => collect(admin.listWorkspaceMembers, 'members', {}, MAX_LISTED),
    [session.workspace.id],
  );
  const [to, setTo] = useState('');
  const transfer = useAction(async () =>
    onDone((await handoffs.assignHandoff(handoff.botId, handoff.id, to)).handoff),
  );
  const colleagues = colleaguesOf(members.data?.items ?? [], session.account.id);
  if (members.data && colleagues.length === 0) return null;
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (to) void transfer.run();
      }}
    >
      <select aria-label="Transfer to" value={to} onChange={(e) => setTo(valueOf(e))}>
        <option value="">Transfer to…</option>
        {colleagues.map((m) => (
          <option key={m.userId} value={m.userId}>
            {m.email} ({m.role})
          </option>
        ))}
      </select>
      <button type="submit" class="secondary" disabled={!to || transfer.busy}>
        Transfer
      </button>
      <InlineError error={transfer.error ?? members.error} />
    </form>
  );
}

export function HandoffScreen({ botId, handoffId }: { botId: string; handoffId: string }) {
  const session = useCurrentSession();
  const queue = useQueue();
  const mayAnswer = can(session.role, 'handoffs.answer');
  const [detail, setDetail] = useState<HandoffDetail | undefined>(undefined);
  const [fresh, setFresh] = useState(0);
  const bot = useLoad(() => admin.getBot(botId), [botId]);
  const pollError = usePolling(
    async (signal) => {
      const read = await handoffs.getHandoff(botId, handoffId, signal);
      if (!signal.aborted) setDetail(read);
    },
    POLL_MS,
    // A closed handoff is polled too: the bot's reply after it is part of the story.
    true,
    [botId, handoffId, fresh],
  );
  const handoff = detail?.handoff;
  // The names the visitor sees: the conversation's participants (the visitor, the agents' users).
  const participants = useLoad(
    async (): Promise<[string, string][]> =>
      handoff
        ? (await runtime.listParticipants(botId, handoff.conversationId)).participants.flatMap((p) =>
            p.name ? [[p.id, p.name]] : [],
          )
        : [],
    [handoff?.conversationId, handoff?.agent?.userId],
  );
  const names = new Map(participants.data);
  if (handoff?.agent) names.set(handoff.agent.userId, handoff.agent.name);
  /** After a change: the answer shown at once, the conversation and the queue read again. */
  const changed = (next: Handoff) => {
    setDetail((d) => d && { ...d, handoff: next });
    setFresh((n) => n + 1);
    queue.refresh();
  };
  const take = useAction(async () => changed((await handoffs.assignHandoff(botId, handoffId)).handoff));
  const resolve = useAction(async () => changed((await handoffs.resolveHandoff(botId, handoffId)).handoff));

  if (!detail || !handoff) {
    return pollError !== undefined ? <ErrorView error={pollError} /> : <Loading what="Opening the handoff" />;
  }
  const mine = handoff.agent?.accountId === session.account.id;
  const open = isOpen(handoff);
  return (
    <>
      <p class="breadcrumb">
        <a href={paths.inbox}>Inbox</a>
      </p>
      <PageHeader
        title={handoff.reason}
        subtitle={
          <>
            {bot.data?.bot.name ?? botId}
            {handoff.team && <span class="tag">team: {handoff.team}</span>}
            <span class={`status handoff-${handoff.status}`}>{STATUS_LABEL[handoff.status]}</span>
          </>
        }
        actions={
          mayAnswer &&
          open && (
            <>
              {!mine && (
                <button type="button" disabled={take.busy} onClick={() => void take.run()}>
                  {handoff.agent ? 'Take over' : 'Take it'}
                </button>
              )}
              {mine && (
                <button
                  type="button"
                  class="secondary"
                  disabled={resolve.busy}
                  onClick={() => void resolve.run()}
                >
                  Resolve
                </button>
              )}
            </>
          )
        }
      />
      <InlineError error={take.error ?? resolve.error} />
      <dl class="facts handoff-facts">
        <dt>Waiting since</dt>
        <dd>
          <Time iso={handoff.createdAt} />
        </dd>
        <dt>Agent</dt>
        <dd>
          {handoff.agent ? (
            <>
              {handoff.agent.name}
              {mine && <span class="tag">you</span>}
            </>
          ) : (
            <span class="muted">nobody yet</span>
          )}
        </dd>
        {handoff.timeoutAt && handoff.status === 'pending' && (
          <>
            <dt>Times out</dt>
            <dd>
              <Time iso={handoff.timeoutAt} />
            </dd>
          </>
        )}
        <dt>Transcript</dt>
        <dd>
          <a href={paths.conversation(botId, handoff.conversationId)}>
            the whole conversation, with its turns
          </a>
        </dd>
      </dl>
      {!mayAnswer && (
        <p class="notice" role="status">
          Read only: your role ({session.role}) may not answer handoffs.
        </p>
      )}
      {!open && (
        <p class="notice" role="status">
          This handoff is {STATUS_LABEL[handoff.status]}: the bot has the conversation again.
        </p>
      )}
      <Conversation detail={detail} names={names} />
      {pollError !== undefined && <InlineError error={pollError} />}
      {mayAnswer && open && mine && (
        <>
          <Composer handoff={handoff} onSent={() => setFresh((n) => n + 1)} />
          <Transfer handoff={handoff} onDone={changed} />
        </>
      )}
      {mayAnswer && open && !mine && handoff.agent && (
        <p class="muted">{handoff.agent.name} has it: take it over to answer.</p>
      )}
    </>
  );
}
