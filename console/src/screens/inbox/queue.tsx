// The workspace's handoff queue, read once for the whole console: the inbox lists it and the navigation
// shows how many wait. Polled every few seconds while the page is visible, so that new handoffs appear
// without a reload (the Admin API has no stream of them).
import { createContext } from 'preact';
import type { ComponentChildren } from 'preact';
import { useContext, useRef, useState } from 'preact/hooks';
import { collect } from '../../../../src/contract/client.ts';
import { admin } from '../../api/admin.ts';
import { MAX_LISTED } from '../../api/client.ts';
import { handoffs } from '../../api/handoffs.ts';
import type { Handoff } from '../../api/handoffs.ts';
import type { BotSummary } from '../../api/types.ts';
import { usePolling } from '../../hooks.ts';
import { useCurrentSession } from '../../session.tsx';

/** How often the queue is read again. */
export const QUEUE_POLL_MS = 3000;
/** How often the list of bots whose queues are read is read again: bots come and go rarely. */
const BOTS_EVERY = 10;

export interface QueuedHandoff extends Handoff {
  botName: string;
}

export interface Queue {
  /** Waiting for an agent, newest first, across the workspace's bots. */
  pending: QueuedHandoff[];
  /** Assigned to the signed-in member, newest first. */
  mine: QueuedHandoff[];
  /** Assigned to colleagues, newest first. */
  others: QueuedHandoff[];
  /** Whether the queue was read at least once. */
  loaded: boolean;
  /** The last read's error (undefined once one succeeds). */
  error: unknown;
  /** Reads it again now (after the screen changed a handoff). */
  refresh: () => void;
}

const EMPTY: Queue = {
  pending: [],
  mine: [],
  others: [],
  loaded: false,
  error: undefined,
  refresh: () => {},
};
const QueueContext = createContext<Queue>(EMPTY);

export const useQueue = (): Queue => useContext(QueueContext);

const newestFirst = (a: Handoff, b: Handoff) => b.createdAt.localeCompare(a.createdAt);

export function QueueProvider({ children }: { children: ComponentChildren }) {
  const session = useCurrentSession();
  const [state, setState] = useState<Omit<Queue, 'error' | 'refresh'>>(EMPTY);
  const [attempt, setAttempt] = useState(0);
  const bots = useRef<{ workspaceId: string; list: BotSummary[]; age: number } | undefined>(undefined);
  const error = usePolling(
    async (signal) => {
      const workspaceId = session.workspace.id;
      const known = bots.current;
      if (!known || known.workspaceId !== workspaceId || known.age >= BOTS_EVERY) {
        const { items } = await collect(admin.listBots, 'bots', {}, MAX_LISTED);
        bots.current = { workspaceId, list: items, age: 0 };
      }
      const current = bots.current;
      if (!current) return;
      current.age++;
      // Two requests a poll, whatever the number of bots: the workspace's queue, by status.
      const names = new Map(current.list.map((bot) => [bot.id, bot.name]));
      const read = await Promise.all(
        (['pending', 'assigned'] as const).map(async (status) =>
          (await handoffs.listWorkspaceHandoffs(status, signal)).handoffs.map((h) => ({
            ...h,
            botName: names.get(h.botId) ?? h.botId,
          })),
        ),
      );
      if (signal.aborted) return;
      const all = read.flat().sort(newestFirst);
      const assigned = all.filter((h) => h.status === 'assigned');
      setState({
        pending: all.filter((h) => h.status === 'pending'),
        mine: assigned.filter((h) => h.agent?.accountId === session.account.id),
        others: assigned.filter((h) => h.agent?.accountId !== session.account.id),
        loaded: true,
      });
    },
    QUEUE_POLL_MS,
    true,
    [session.workspace.id, attempt],
  );
  const refresh = () => setAttempt((n) => n + 1);
  return <QueueContext.Provider value={{ ...state, error, refresh }}>{children}</QueueContext.Provider>;
}

/** The navigation's count of waiting handoffs; nothing when none wait. */
export function QueueBadge() {
  const { pending } = useQueue();
  if (pending.length === 0) return null;
  return (
    <span class="count" aria-label={`${pending.length} waiting`}>
      {pending.length}
    </span>
  );
}
