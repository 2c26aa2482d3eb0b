import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { logOperations } from '../../contract/admin/logs.ts';
import type { Handlers } from '../operation.ts';

export const logHandlers = {
  getBotLogs: async (d, actor, { id, ...query }) => {
    const page = await d.botLogs.list(actor, id, query);
    return { logs: page.items, ...(page.nextToken !== undefined && { nextToken: page.nextToken }) };
  },
} satisfies Handlers<WorkspaceActor, typeof logOperations>;
