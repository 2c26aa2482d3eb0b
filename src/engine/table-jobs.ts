import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import type { Row } from '../store/schema.ts';
import { LeasedWork } from './leased-work.ts';

/** How long a claim on a table job holds without renewal. */
export const TABLE_JOB_LEASE_MS = 15_000;
const POLL_MS = 1000;
/** Jobs run at once by one process: they are long and write much, so few. */
const CONCURRENCY = 1;

/**
 * Runs table jobs (exports, imports) off the request path, from their durable queue (domain/tables/jobs.ts).
 * Claims are leases renewed while a job runs: a job of a process that died is taken up by another.
 */
export class TableJobRunner {
  private readonly work: LeasedWork<Row<'table_jobs'>>;

  constructor(domain: Domain, log: FastifyBaseLogger) {
    this.work = new LeasedWork(domain.tableJobs, log, {
      name: 'table job',
      concurrency: CONCURRENCY,
      leaseMs: TABLE_JOB_LEASE_MS,
      renewMs: TABLE_JOB_LEASE_MS / 3,
      pollMs: POLL_MS,
      subscribe: (wake) => domain.tableJobs.onQueued(wake),
      work: (row, owner) =>
        domain.tableJobs.run(owner, row).catch((err: unknown) => {
          // Not the file's fault (the store failed): the claim lapses and the job is tried again.
          log.error({ err, jobId: row.id }, 'table job failed; it will be tried again');
        }),
    });
  }

  start(): Promise<void> {
    return this.work.start();
  }

  stop(): Promise<void> {
    return this.work.stop();
  }
}
