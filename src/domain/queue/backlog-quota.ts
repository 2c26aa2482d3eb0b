import { sql } from 'kysely';
import type { Executor } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import { RetryLater } from '../shared/errors.ts';

/** How long a workspace's count of pending events is trusted before it is read again. */
const COUNT_FRESH_MS = 1000;
/** What a sender refused for a backlog is told to wait before it sends again (`Retry-After`). */
export const BACKLOG_RETRY_AFTER_SECONDS = 5;

/** A workspace's pending events, counted up to `upTo` (its partial index by workspace; no further). */
const countPending = prepare(
  ['workspaceId', 'upTo'],
  (_db, a: { workspaceId: string; upTo: number }) =>
    sql<{ pending: number | string }>`select count(*) as pending from (
    select 1 from events where workspace_id = ${a.workspaceId} and status = 'pending' limit ${a.upTo}
  ) backlog`,
);

/**
 * The most events a workspace may have waiting for its bots (`pending`). Past it, what would queue one
 * more from outside (a message, an event, a webhook request) is refused with 429 `RateLimited` and
 * `Retry-After`: nothing is acknowledged that is not kept, and the sender knows to send it again later.
 * The engine shares its turns among workspaces, so such a backlog delays only its own workspace's replies;
 * this bounds how much of the store, and how long a wait, one workspace can pile up.
 *
 * Each process reads a workspace's count at most once a second, and counts what it queued since on top:
 * a message costs no statement for it in between. Several processes may together queue a second's worth
 * of events past the limit.
 */
export class BacklogQuota {
  private readonly counts = new Map<string, { pending: number; readAt: number }>();

  /** `max`: pending events a workspace may have; undefined: no limit. */
  constructor(private readonly max: number | undefined) {}

  /** Throws `RetryLater` when the workspace's backlog is full; counts one more event otherwise. */
  async admit(db: Executor, workspaceId: string): Promise<void> {
    const { max } = this;
    if (max === undefined) return;
    const now = Date.now();
    let known = this.counts.get(workspaceId);
    if (!known || now - known.readAt >= COUNT_FRESH_MS) {
      const { rows } = await countPending.execute(db, { workspaceId, upTo: max });
      known = { pending: Number(rows[0]?.pending ?? 0), readAt: now };
      this.counts.set(workspaceId, known);
      this.forgetStale(now);
    }
    if (known.pending >= max) {
      throw new RetryLater(
        `This workspace has ${max} events or more waiting for its bots: try again in ${BACKLOG_RETRY_AFTER_SECONDS} seconds`,
        BACKLOG_RETRY_AFTER_SECONDS,
      );
    }
    known.pending++;
  }

  /** The counts of workspaces that queued nothing for a while are read again anyway: keep only recent ones. */
  private forgetStale(now: number): void {
    if (this.counts.size < 1000) return;
    for (const [workspaceId, { readAt }] of this.counts)
      if (now - readAt >= COUNT_FRESH_MS) this.counts.delete(workspaceId);
  }
}
