import type { Store } from '../../store/index.ts';
import { ApiError } from '../shared/errors.ts';
import { requireRole } from '../workspace/roles.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import type { LlmUsage } from './usage.ts';

/**
 * How long a workspace's cap and month's spend are reused before they are read again: a call may pass
 * a cap by what the calls of these few seconds cost, and a cap a process set holds there at once.
 */
const READ_AGAIN_MS = 5_000;

/** The first instant of the calendar month (UTC) of `now`, as stored timestamps are written. */
function monthStart(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

/**
 * A workspace's monthly cap on what its bots' model calls cost (`changeAispendQuota`), and its check
 * before each call: past the cap, calls are refused with `QuotaExceeded` until the month ends or the
 * cap is raised.
 */
export class AiSpend {
  private readonly known = new Map<
    string,
    { limit: number | null; spent: number; month: string; at: number }
  >();

  constructor(
    private readonly store: Store,
    /** The calls' records: the month's sum counts those under way too. */
    private readonly usage: LlmUsage,
  ) {}

  async setLimit(actor: WorkspaceActor, monthlySpendingLimit: number): Promise<void> {
    requireRole(actor.role, 'workspace.update');
    await this.store.db
      .updateTable('workspaces')
      .set({ ai_spend_limit: monthlySpendingLimit })
      .where('id', '=', actor.workspaceId)
      .execute();
    this.known.delete(actor.workspaceId);
  }

  /** Counts a call's cost at once in what this process knows of the month's spend. */
  spent(workspaceId: string, cost: number): void {
    const kept = this.known.get(workspaceId);
    if (kept) kept.spent += cost;
  }

  /** Throws `QuotaExceeded` when the workspace's calls of this month cost its cap or more. */
  async check(workspaceId: string): Promise<void> {
    const { limit, spent } = await this.read(workspaceId);
    if (limit !== null && spent >= limit) {
      throw new ApiError(
        'QuotaExceeded',
        `The workspace's model calls cost $${spent.toFixed(4)} this month, its AI spend limit is $${limit}: raise it with changeAispendQuota, or wait for the next month`,
      );
    }
  }

  /**
   * The workspace's cap and month's spend. A figure older than READ_AGAIN_MS is still answered while
   * it is read again for the calls that follow: a call waits for the store only when this process knows
   * nothing of the workspace's month (its first call, a new month, a cap it just set), so the read is
   * off the first token's path, and the figure is as late as before (a read, plus the calls under way).
   */
  private async read(workspaceId: string): Promise<{ limit: number | null; spent: number }> {
    const now = new Date();
    const month = monthStart(now);
    const kept = this.known.get(workspaceId);
    if (kept && kept.month === month) {
      if (now.getTime() - kept.at >= READ_AGAIN_MS) {
        // Once per period: the calls until it is read answer from the figure kept. A failed read is
        // tried again a period later, and a figure a cap change dropped meanwhile is not put back.
        kept.at = now.getTime();
        void this.readStore(workspaceId, month, kept).catch(() => undefined);
      }
      return kept;
    }
    return this.readStore(workspaceId, month);
  }

  /** Reads the figure from the store and keeps it, in place of `replacing` when given and still kept. */
  private async readStore(workspaceId: string, month: string, replacing?: { at: number }) {
    const at = Date.now();
    const row = await this.store.db
      .selectFrom('workspaces')
      .select('ai_spend_limit')
      .where('id', '=', workspaceId)
      .executeTakeFirst();
    const limit = row?.ai_spend_limit ?? null;
    let spent = 0;
    if (limit !== null) {
      await this.usage.settled();
      const sum = await this.store.db
        .selectFrom('llm_calls')
        .select((eb) => eb.fn.sum<number | string | null>('cost').as('spent'))
        .where('workspace_id', '=', workspaceId)
        .where('created_at', '>=', month)
        .executeTakeFirst();
      spent = Number(sum?.spent ?? 0);
    }
    const fresh = { limit: limit === null ? null : Number(limit), spent, month, at };
    if (!replacing || this.known.get(workspaceId) === replacing) this.known.set(workspaceId, fresh);
    return fresh;
  }
}
