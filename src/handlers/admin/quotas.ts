import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { quotaOperations } from '../../contract/admin/quotas.ts';
import type { Handlers } from '../operation.ts';

export const quotaHandlers = {
  changeAISpendQuota: async (d, actor, { monthlySpendingLimit }) => {
    await d.aiSpend.setLimit(actor, monthlySpendingLimit);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof quotaOperations>;
