import type { BotActor } from '../../domain/workspace/actors.ts';
import type { jobOperations } from '../../contract/tables/jobs.ts';
import type { Handlers } from '../operation.ts';

export const jobHandlers = {
  exportTable: async (d, actor, { table, format, compress }) => ({
    job: await d.tableJobs.startExport(actor, table, format, compress ?? true),
  }),
  importTable: async (d, actor, { table, fileId }) => ({
    job: await d.tableJobs.startImport(actor, table, fileId),
  }),
  getTableJobs: async (d, actor, { table }) => ({ jobs: await d.tableJobs.list(actor, table) }),
} satisfies Handlers<BotActor, typeof jobOperations>;
