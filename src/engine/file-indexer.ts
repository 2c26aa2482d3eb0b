import type { FastifyBaseLogger } from 'fastify';
import type { Domain } from '../domain/index.ts';
import type { Row } from '../store/schema.ts';
import { LeasedWork } from './leased-work.ts';

/** How long a claim on a file's indexing holds without renewal: a process that died lets go within this. */
export const INDEXING_LEASE_MS = 15_000;
/** How often the indexer looks for work when nothing woke it. */
const POLL_MS = 1000;
/** Files indexed at once by one process (parsing runs in one worker thread). */
const CONCURRENCY = 2;
/** Files or tables embedded at once by one process (each waits on the provider, batch after batch). */
const EMBEDDING_CONCURRENCY = 2;
/** A claim on an item's embedding: renewed while its batches are sent. */
const EMBEDDING_LEASE_MS = 30_000;

/**
 * Indexes files off the request path: takes files waiting for indexing off the durable queue (the
 * files table, see IndexingQueue), parses them in a worker thread and stores their passages; then,
 * when an embedding model is configured, embeds their passages (and tables' rows) off a queue of its own
 * (EmbeddingQueue), after queueing at start what the model changed since made stale (re-embedding).
 * Claims are leases renewed while a file is worked on, so the files of a process that died are taken
 * up again.
 */
export class FileIndexer {
  private readonly work: LeasedWork<Row<'files'>>;
  private readonly embedding: LeasedWork<Row<'embedding_jobs'>>;
  private restale: Promise<void> = Promise.resolve();

  constructor(
    private readonly domain: Domain,
    private readonly log: FastifyBaseLogger,
  ) {
    this.work = new LeasedWork(domain.indexing, log, {
      name: 'indexing',
      concurrency: CONCURRENCY,
      leaseMs: INDEXING_LEASE_MS,
      renewMs: INDEXING_LEASE_MS / 3,
      pollMs: POLL_MS,
      subscribe: (wake) => domain.files.onIndexingQueued(wake),
      work: (row, owner) =>
        domain.indexing.index(owner, row).catch((err: unknown) => {
          // Not the document's fault (the store failed): the claim lapses and the file is tried again.
          log.error({ err, fileId: row.id }, 'indexing failed; the file will be tried again');
        }),
    });
    this.embedding = new LeasedWork(domain.embedding, log, {
      name: 'embedding',
      concurrency: EMBEDDING_CONCURRENCY,
      leaseMs: EMBEDDING_LEASE_MS,
      renewMs: EMBEDDING_LEASE_MS / 3,
      pollMs: POLL_MS,
      subscribe: (wake) => domain.embedding.onQueued(() => wake()),
      work: async (job, owner) => {
        const failure = await domain.embedding.embed(owner, job).catch((err: unknown) => err);
        if (failure !== undefined) {
          // The provider, or the store: the job is due again after a backoff; search uses words meanwhile.
          log.warn(
            { err: failure, kind: job.kind, id: job.id, attempts: job.attempts + 1 },
            'embedding failed; it will be tried again',
          );
        }
      },
    });
  }

  async start(): Promise<void> {
    await this.work.start();
    await this.embedding.start();
    // In the background: a model changed since re-embeds every file and table, while search goes on.
    this.restale = this.domain.embedding
      .queueStale()
      .then((queued) => {
        if (queued > 0) this.log.info({ queued }, 'embedding again what an earlier model (or none) indexed');
      })
      .catch((err: unknown) => this.log.error({ err }, 'looking for vectors of an earlier model failed'));
  }

  /** Stops taking files and waits for the ones in progress. */
  async stop(): Promise<void> {
    await this.restale;
    await Promise.all([this.work.stop(), this.embedding.stop()]);
  }
}
