import { Type } from 'typebox';
import { EmptySchema } from '../schemas.ts';
import { operation } from '../operation.ts';

export const quotaOperations = [
  operation({
    id: 'changeAISpendQuota',
    method: 'PUT',
    path: '/quotas/ai-spend',
    access: 'write',
    tag: 'Quotas',
    summary: 'Set what the workspace’s model calls may cost in a month',
    description:
      'In US dollars, per calendar month (UTC), from the prices the operator set (`PARLEY_LLM_PRICES`). Past it, every model call of the workspace’s bots (the Cognitive API and the `llm` integration) answers `403 QuotaExceeded` until the month ends or the limit is raised. Administrators and owners.',
    body: { monthlySpendingLimit: Type.Number({ minimum: 0 }) },
    response: EmptySchema,
  }),
] as const;
