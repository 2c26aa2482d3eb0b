import type { Executor, Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { keptErrorText } from '../shared/errors.ts';
import { LeasedRows } from '../shared/leased-rows.ts';
import { ProviderFailure } from '../llm/openai-compatible.ts';
import { nowIso } from '../shared/time.ts';
import { backoffMs } from '../webhooks/sends.ts';
import type { EmbeddingJobs } from './passages.ts';
import { searchEntries } from './passages.ts';
import { contentHash, toBytes, unitVector } from './vectors.ts';
import type { PassageEmbedder } from './vectors.ts';

/** A file's embedding whose provider failed this many times is given up (its text search still works). */
export const MAX_EMBEDDING_ATTEMPTS = 8;
/** Hashes looked up in one statement. */
const LOOKUP_BATCH = 500;
/** Texts given to the embedder at once (it sends its own batches within): vectors are written per call. */
const BATCH = 256;

type EmbeddingJob = Row<'embedding_jobs'>;
type Vector = { passage_id: string; content_hash: string; dimension: number; vector: Uint8Array };

/**
 * The durable queue of embedding work (`embedding_jobs`, one row per file, queued with its passages):
 * claimed with a lease; a job whose provider fails is due again after a backoff, and given up after
 * MAX_EMBEDDING_ATTEMPTS. A file's passages are embedded in batches, each batch's vectors written as
 * it comes (a job taken up again goes on where it stopped); a text the bot has embedded already, in any
 * of its files, is not sent again. Until a file's passages have vectors, search finds them by their words.
 */
export class EmbeddingQueue implements EmbeddingJobs {
  private readonly rows: LeasedRows;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly store: Store,
    private readonly embedder: PassageEmbedder,
  ) {
    this.rows = new LeasedRows(store, 'embedding_jobs');
  }

  async queue(trx: Executor, fileId: string): Promise<void> {
    const { model } = this.embedder;
    if (model === undefined) return;
    const now = nowIso();
    const job = {
      model,
      status: 'pending' as const,
      attempts: 0,
      last_error: null,
      next_attempt_at: now,
      lease_owner: null,
      lease_until: null,
      updated_at: now,
    };
    await trx
      .insertInto('embedding_jobs')
      .values({ id: fileId, ...job, created_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet(job))
      .execute();
  }

  /** Tells the worker that jobs were queued (once they are committed). */
  notify(): void {
    for (const listener of this.listeners) listener();
  }

  onQueued(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: EmbeddingJob[]; more: boolean }> {
    // Jobs queued by a server that had a model wait for one that has one again.
    if (this.embedder.model === undefined) return { items: [], more: false };
    const { ids, more } = await this.rows.claim(owner, leaseMs, limit);
    if (ids.length === 0) return { items: [], more };
    const items = await this.store.db
      .selectFrom('embedding_jobs')
      .selectAll()
      .where('id', 'in', ids)
      .execute();
    return { items, more };
  }

  renew(owner: string, ids: string[], leaseMs: number): Promise<void> {
    return this.rows.renew(owner, ids, leaseMs);
  }

  releaseStaleClaims(): Promise<void> {
    return this.rows.releaseStaleClaims();
  }

  /**
   * Embeds the passages of a claimed job's file that have no vector yet. A provider's failure (or the
   * store's) is recorded on the job, which is due again after the backoff; answers that failure.
   */
  async embed(owner: string, claimed: EmbeddingJob): Promise<Error | undefined> {
    const job = await this.withCurrentModel(owner, claimed);
    if (!job) return undefined;
    try {
      const missing = await this.missing(job);
      const known = await this.known(job, [...new Set(missing.map((m) => m.hash))]);
      const reused = missing.flatMap((m) => {
        const vector = known.get(m.hash);
        return vector ? [{ ...vector, passage_id: m.id }] : [];
      });
      if (!(await this.write(owner, job, reused))) return undefined;
      const left = missing.filter((m) => !known.has(m.hash));
      for (let at = 0; at < left.length; at += BATCH) {
        const batch = left.slice(at, at + BATCH);
        const vectors = await this.embedder.embed(batch.map((m) => m.text));
        const rows = batch.map((m, i) => {
          const unit = unitVector(vectors[i] ?? []);
          return { passage_id: m.id, content_hash: m.hash, dimension: unit.length, vector: toBytes(unit) };
        });
        if (!(await this.write(owner, job, rows))) return undefined;
      }
      await this.store.db
        .deleteFrom('embedding_jobs')
        .where('id', '=', job.id)
        .where('lease_owner', '=', owner)
        .execute();
      return undefined;
    } catch (err) {
      const failure = err instanceof Error ? err : new Error(String(err));
      await this.failed(owner, job, failure);
      return failure;
    }
  }

  /**
   * The job, to be done with the model configured now: one queued under another (the setting changed
   * since) is moved to it, so that no vector is recorded under a model that did not make it. Undefined
   * when the claim no longer holds, or no model is configured.
   */
  private async withCurrentModel(owner: string, job: EmbeddingJob): Promise<EmbeddingJob | undefined> {
    const { model } = this.embedder;
    if (model === undefined) return undefined;
    if (job.model === model) return job;
    const moved = await this.store.db
      .updateTable('embedding_jobs')
      .set({ model, updated_at: nowIso() })
      .where('id', '=', job.id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 0 ? undefined : { ...job, model };
  }

  /** The passages of the job's file without a vector of its model, with the text to embed. */
  private async missing(job: EmbeddingJob): Promise<{ id: string; text: string; hash: string }[]> {
    const passages = await this.store.db
      .selectFrom('file_passages')
      .select(['id', 'type', 'content'])
      .where('file_id', '=', job.id)
      .orderBy('position')
      .execute();
    const embedded = await this.store.db
      .selectFrom('passage_vectors')
      .select('passage_id')
      .where('file_id', '=', job.id)
      .where('model', '=', job.model)
      .execute();
    const done = new Set(embedded.map((v) => v.passage_id));
    return searchEntries(passages)
      .filter((entry) => !done.has(entry.id))
      .map((entry) => ({ ...entry, hash: contentHash(entry.text) }));
  }

  /** Vectors of these texts the file's bot has already, by their hash (never another bot's). */
  private async known(job: EmbeddingJob, hashes: string[]): Promise<Map<string, Omit<Vector, 'passage_id'>>> {
    const known = new Map<string, Omit<Vector, 'passage_id'>>();
    for (let at = 0; at < hashes.length; at += LOOKUP_BATCH) {
      const rows = await this.store.db
        .selectFrom('passage_vectors')
        .innerJoin('files', 'files.id', 'passage_vectors.file_id')
        .select(['content_hash', 'dimension', 'vector'])
        .where('passage_vectors.model', '=', job.model)
        .where('content_hash', 'in', hashes.slice(at, at + LOOKUP_BATCH))
        .where('files.bot_id', '=', (eb) => eb.selectFrom('files').select('bot_id').where('id', '=', job.id))
        .execute();
      for (const row of rows) known.set(row.content_hash, row);
    }
    return known;
  }

  /**
   * Writes vectors of the job's file, if the claim still holds (a file indexed again meanwhile queued a
   * job of its own, unclaimed, and its passages are others): answers whether it held.
   */
  private async write(owner: string, job: EmbeddingJob, vectors: Vector[]): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const held = await trx
        .updateTable('embedding_jobs')
        .set({ updated_at: nowIso() })
        .where('id', '=', job.id)
        .where('model', '=', job.model)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (Number(held.numUpdatedRows) === 0) return false;
      const rows = vectors.map((v) => ({ ...v, file_id: job.id, model: job.model }));
      for (let at = 0; at < rows.length; at += 200) {
        await trx
          .insertInto('passage_vectors')
          .values(rows.slice(at, at + 200))
          .onConflict((oc) => oc.columns(['passage_id', 'model']).doNothing())
          .execute();
      }
      return true;
    });
  }

  private async failed(owner: string, job: EmbeddingJob, failure: Error): Promise<void> {
    const attempts = job.attempts + 1;
    const retryAfterMs = retryAfterOf(failure) ?? 0;
    await this.store.db
      .updateTable('embedding_jobs')
      .set({
        status: attempts >= MAX_EMBEDDING_ATTEMPTS ? 'failed' : 'pending',
        attempts,
        last_error: keptErrorText(failure.message),
        next_attempt_at: new Date(Date.now() + Math.max(backoffMs(attempts), retryAfterMs)).toISOString(),
        lease_owner: null,
        lease_until: null,
        updated_at: nowIso(),
      })
      .where('id', '=', job.id)
      .where('lease_owner', '=', owner)
      .execute();
  }
}

/** A rate limit's `Retry-After`, in milliseconds, when the provider gave one. */
function retryAfterOf(failure: Error): number | undefined {
  if (!(failure instanceof ProviderFailure) || failure.retryAfterSeconds === undefined) return undefined;
  return failure.retryAfterSeconds * 1000;
}
