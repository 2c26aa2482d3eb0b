// The inbox: the conversations the workspace's bots handed to a person. What waits for an agent, what the
// signed-in member has taken, and what colleagues have; each opens to the conversation.
import type { ComponentChildren } from 'preact';
import { paths } from '../../paths.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import { EmptyState, InlineError, ListTable, Loading, PageHeader, Time } from '../../ui/components.tsx';
import type { Column } from '../../ui/components.tsx';
import { useQueue } from './queue.tsx';
import type { QueuedHandoff } from './queue.tsx';

const open = (h: QueuedHandoff) => (
  <a href={paths.handoff(h.botId, h.id)} aria-label={`Open: ${h.reason}`}>
    {h.reason}
  </a>
);

const COLUMNS: Column<QueuedHandoff>[] = [
  { label: 'Reason', cell: open },
  { label: 'Bot', cell: (h) => h.botName },
  { label: 'Team', cell: (h) => h.team ?? <span class="muted">none</span> },
  { label: 'Waiting since', cell: (h) => <Time iso={h.createdAt} /> },
];

const ASSIGNED: Column<QueuedHandoff>[] = [
  ...COLUMNS.slice(0, 3),
  { label: 'Agent', cell: (h) => h.agent?.name },
  { label: 'Taken', wide: true, cell: (h) => <Time iso={h.assignedAt} /> },
];

function Section(props: { title: string; label: string; children: ComponentChildren }) {
  return (
    <section class="inbox-section" aria-label={props.label}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

export function Inbox() {
  const session = useCurrentSession();
  const queue = useQueue();
  const mayAnswer = can(session.role, 'handoffs.answer');
  return (
    <>
      <PageHeader
        title="Inbox"
        subtitle="Conversations the bots handed to a person. New ones appear here as they come."
      />
      {!mayAnswer && (
        <p class="notice" role="status">
          Read only: your role ({session.role}) may read these conversations but not answer them.
        </p>
      )}
      <InlineError error={queue.error} />
      {!queue.loaded ? (
        queue.error === undefined && <Loading what="Reading the queue" />
      ) : (
        <>
          <Section title={`Waiting (${queue.pending.length})`} label="Waiting">
            {queue.pending.length === 0 ? (
              <EmptyState title="Nobody is waiting">
                <p class="muted">A bot's handoff card or hitl call puts its conversation here.</p>
              </EmptyState>
            ) : (
              <ListTable items={queue.pending} columns={COLUMNS} />
            )}
          </Section>
          {queue.mine.length > 0 && (
            <Section title={`Yours (${queue.mine.length})`} label="Yours">
              <ListTable items={queue.mine} columns={ASSIGNED} />
            </Section>
          )}
          {queue.others.length > 0 && (
            <Section title={`With colleagues (${queue.others.length})`} label="With colleagues">
              <ListTable items={queue.others} columns={ASSIGNED} />
            </Section>
          )}
        </>
      )}
    </>
  );
}
