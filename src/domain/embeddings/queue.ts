import type { Expression } from 'kysely';
import { isTrue } from '../../store/index.ts';
import type { Executor, Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { EmbeddingKind, SearchRanking } from '../../value-sets.ts';
import { keptErrorText } from '../shared/errors.ts';
import { LeasedRows } from '../shared/leased-rows.ts';
import { ProviderFailure } from '../llm/openai-compatible.ts';
import { nowIso } from '../shared/time.ts';
import { backoffMs } from '../webhooks/sends.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { SearchFallback } from './ranking.ts';
import { toBytes } from '../../store/vectors/bytes.ts';
import { vectorSignature } from '../../store/vectors/signature.ts';
import { unitVector } from './vectors.ts';
import type { TextEmbedder } from './vectors.ts';

/**
 * Search by meaning, as files and tables are given it: the queue of embedding work with its model, and
 * who is told when a search answers by words alone.
 */
export interface SemanticSearch {
  embedding: EmbeddingQueue;
  onFallback: (fallback: SearchFallback) => void;
  /** How searches rank once there is a model (PARLEY_SEARCH_RANKING). */
  ranking: SearchRanking;
}

/** An item's embedding whose provider failed this many times is given up (its text search still works). */
export const MAX_EMBEDDING_ATTEMPTS = 8;
/** Texts given to the embedder at once (it sends its own batches within): vectors are written per call. */
const BATCH = 256;
/** Texts without a vector read at once from an item (a table's rows are read page by page). */
const PAGE = 1024;
/** Content hashes looked up in one statement (`in (…)`). */
const HASHES_PER_LOOKUP = 500;

type EmbeddingJob = Row<'embedding_jobs'>;

/** A text of an item to embed: `key` names it in the item (a passage's id, a row's id), `hash` its text. */
export interface EmbeddingText {
  key: string;
  text: string;
  hash: string;
}

/** A vector as stored, by the hash of the text it embeds (dimension 0: there was nothing to embed). */
export interface StoredVector {
  content_hash: string;
  dimension: number;
  vector: Uint8Array;
  /** The vector's signature, for the store's vector index (null for a vector of no dimension). */
  signature: Uint8Array | null;
}

/** What the queue embeds, for one kind of item (files' passages, tables' rows): where their vectors live. */
export interface EmbeddingSource {
  /** Up to `limit` texts of the item that have no vector of `model` (none: done, or the item is gone). */
  missing(db: Executor, id: string, model: string, limit: number): Promise<EmbeddingText[]>;
  /**
   * The vectors of `model` the bot has already of these hashes (at most `HASHES_PER_LOOKUP`), in any item of
   * this kind (never another bot's).
   */
  known(db: Executor, botId: string, model: string, hashes: string[]): Promise<StoredVector[]>;
  /** Stores vectors of the item's texts, in the caller's transaction (a text changed since is skipped). */
  write(trx: Executor, id: string, model: string, vectors: (StoredVector & { key: string })[]): Promise<void>;
  /** The items whose texts are not all embedded with `model` (another model's, or none): to embed. */
  stale(db: Executor, model: string): Promise<{ id: string; botId: string }[]>;
  /** Of these items, the model other than `model` that most of their vectors have, if any. */
  otherModel(db: Executor, ids: string[], model: string): Promise<string | undefined>;
  /** A query of any one vector of `model` of these items (a search by meaning needs one). */
  anyVector(db: Executor, ids: string[], model: string): Expression<unknown>;
  /** Removes the bot's vectors of models other than `model`. */
  dropOthers(db: Executor, botId: string, model: string): Promise<void>;
}

/**
 * The durable queue of embedding work (`embedding_jobs`): one row per file or table, queued in the
 * transaction that gives it texts to embed, claimed with a lease; a job whose provider fails is due
 * again after a backoff, and given up after MAX_EMBEDDING_ATTEMPTS. An item's texts are embedded in
 * batches, each batch's vectors written as it comes (a job taken up again goes on where it stopped); a
 * text the bot has embedded already, in any item of the kind, is not sent again. Until an item's texts
 * have vectors, search finds them by their words.
 *
 * When the configured model changes, `queueStale` queues every item whose vectors are of another model:
 * meanwhile search ranks such an item's scope with the vectors it has (`searchModel`), and once none of
 * a bot's items waits any more its vectors of older models are removed.
 */
export class EmbeddingQueue {
  private readonly rows: LeasedRows;
  private readonly listeners = new Set<() => void>();
  private readonly sources = new Map<EmbeddingKind, EmbeddingSource>();

  constructor(
    private readonly store: Store,
    readonly embedder: TextEmbedder,
  ) {
    this.rows = new LeasedRows(store, 'embedding_jobs');
  }

  /** The kinds of items are registered by their domains (files, tables) as they are made. */
  register(kind: EmbeddingKind, source: EmbeddingSource): void {
    this.sources.set(kind, source);
  }

  /** Queues (again) the embedding of an item's texts, in the caller's transaction; none without a model. */
  async queue(trx: Executor, kind: EmbeddingKind, id: string, botId: string): Promise<void> {
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
      .values({ id, kind, bot_id: botId, ...job, created_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet(job))
      .execute();
  }

  /** Removes the jobs of items that are deleted, in their transaction. */
  async forget(trx: Executor, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await trx.deleteFrom('embedding_jobs').where('id', 'in', ids).execute();
  }

  /** Tells the worker that jobs were queued (once they are committed). */
  notify(): void {
    for (const listener of this.listeners) listener();
  }

  onQueued(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * At start: queues every item whose texts are not all embedded with the configured model (it changed,
   * or was set since they were indexed), unless it waits already or was given up with this model.
   * Answers how many were queued.
   */
  async queueStale(): Promise<number> {
    const { model } = this.embedder;
    if (model === undefined) return 0;
    let queued = 0;
    for (const [kind, source] of this.sources) {
      const items = await source.stale(this.store.db, model);
      for (let at = 0; at < items.length; at += 500) {
        const page = items.slice(at, at + 500);
        const jobs = await this.store.db
          .selectFrom('embedding_jobs')
          .select(['id', 'status', 'model'])
          .where(
            'id',
            'in',
            page.map((i) => i.id),
          )
          .execute();
        const settled = new Set(
          jobs.filter((j) => j.status === 'pending' || j.model === model).map((j) => j.id),
        );
        for (const item of page.filter((i) => !settled.has(i.id))) {
          await this.queue(this.store.db, kind, item.id, item.botId);
          queued++;
        }
      }
    }
    if (queued > 0) this.notify();
    return queued;
  }

  /**
   * The model a search over these items ranks with, once they have vectors of it (none: they have none
   * yet, and the search ranks by words): the configured one, unless some of them wait to be embedded
   * again while they have vectors of an older model; that one then, until they are done (a query is
   * compared with the vectors of the model that embedded it only). One statement asks both whether any
   * waits and whether any vector of the configured model is there: a search's round trip less.
   */
  async searchModel(
    kind: EmbeddingKind,
    ids: string[],
    db: Executor = this.store.db,
  ): Promise<string | undefined> {
    const { model } = this.embedder;
    const source = this.sources.get(kind);
    if (model === undefined || !source || ids.length === 0) return undefined;
    const waitingJobs = db
      .selectFrom('embedding_jobs')
      .select('id')
      .where('kind', '=', kind)
      .where('status', '=', 'pending')
      .where('id', 'in', ids);
    const { waiting, embedded } = await db
      .selectNoFrom((eb) => [
        eb.exists(waitingJobs).as('waiting'),
        eb.exists(source.anyVector(db, ids, model)).as('embedded'),
      ])
      .executeTakeFirstOrThrow();
    if (!isTrue(waiting)) return isTrue(embedded) ? model : undefined;
    const pending = await waitingJobs.execute();
    const older = await source.otherModel(
      db,
      pending.map((w) => w.id),
      model,
    );
    if (older === undefined) return isTrue(embedded) ? model : undefined;
    const { some } = await db
      .selectNoFrom((eb) => eb.exists(source.anyVector(db, ids, older)).as('some'))
      .executeTakeFirstOrThrow();
    return isTrue(some) ? older : undefined;
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
   * Embeds the texts of a claimed job's item that have no vector yet. A provider's failure (or the
   * store's) is recorded on the job, which is due again after the backoff; answers that failure.
   */
  async embed(owner: string, claimed: EmbeddingJob): Promise<Error | undefined> {
    const job = await this.withCurrentModel(owner, claimed);
    const source = job && this.sources.get(job.kind);
    if (!job || !source) return undefined;
    try {
      const actor = await this.botActor(job.bot_id);
      // The bot is gone, and its items with it.
      if (actor && !(await this.embedItem(owner, job, source, actor))) return undefined;
      await this.store.db
        .deleteFrom('embedding_jobs')
        .where('id', '=', job.id)
        .where('lease_owner', '=', owner)
        .execute();
      await this.dropSuperseded(job.bot_id, job.model);
      return undefined;
    } catch (err) {
      const failure = err instanceof Error ? err : new Error(String(err));
      await this.failed(owner, job, failure);
      return failure;
    }
  }

  /** Embeds an item's missing texts page by page; answers false when the claim was lost meanwhile. */
  private async embedItem(
    owner: string,
    job: EmbeddingJob,
    source: EmbeddingSource,
    actor: BotActor,
  ): Promise<boolean> {
    const tried = new Set<string>();
    for (;;) {
      const missing = await source.missing(this.store.db, job.id, job.model, PAGE);
      if (missing.length === 0) return true;
      // A text that stays missing once written (changed again meanwhile) is tried once per page.
      const fresh = missing.filter((m) => !tried.has(`${m.key}:${m.hash}`));
      if (fresh.length === 0) return true;
      for (const m of fresh) tried.add(`${m.key}:${m.hash}`);
      const known = await this.known(source, job, [...new Set(fresh.map((m) => m.hash))]);
      const empty = new Float32Array(0);
      const reused = fresh.flatMap((m) => {
        const vector = known.get(m.hash);
        if (vector) return [{ ...vector, key: m.key }];
        // Nothing to embed: a vector of no dimension says it was looked at.
        if (m.text.trim() === '')
          return [
            { key: m.key, content_hash: m.hash, dimension: 0, vector: toBytes(empty), signature: null },
          ];
        return [];
      });
      if (!(await this.write(owner, job, source, reused))) return false;
      const left = fresh.filter((m) => !known.has(m.hash) && m.text.trim() !== '');
      for (let at = 0; at < left.length; at += BATCH) {
        const batch = left.slice(at, at + BATCH);
        const vectors = await this.embedder.embed(
          batch.map((m) => m.text),
          { actor, model: job.model },
        );
        const rows = batch.map((m, i) => {
          const unit = unitVector(vectors[i] ?? []);
          return {
            key: m.key,
            content_hash: m.hash,
            dimension: unit.length,
            vector: toBytes(unit),
            signature: unit.length > 0 ? vectorSignature(unit) : null,
          };
        });
        if (!(await this.write(owner, job, source, rows))) return false;
      }
    }
  }

  /**
   * Once none of the bot's items waits to be embedded again while it has vectors of an older model,
   * those vectors are removed: search ranks every item of the bot with `model` from then on.
   */
  private async dropSuperseded(botId: string, model: string): Promise<void> {
    const waiting = await this.store.db
      .selectFrom('embedding_jobs')
      .select(['id', 'kind'])
      .where('bot_id', '=', botId)
      .where('status', '=', 'pending')
      .execute();
    for (const [kind, source] of this.sources) {
      const ids = waiting.filter((w) => w.kind === kind).map((w) => w.id);
      if (ids.length > 0 && (await source.otherModel(this.store.db, ids, model)) !== undefined) return;
    }
    for (const source of this.sources.values()) await source.dropOthers(this.store.db, botId, model);
  }

  private async botActor(botId: string): Promise<BotActor | undefined> {
    const bot = await this.store.db
      .selectFrom('bots')
      .select('workspace_id')
      .where('id', '=', botId)
      .executeTakeFirst();
    return bot && { botId, workspaceId: bot.workspace_id };
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

  /** The vectors the job's bot has already of these hashes, by hash: looked up a statement's worth at a time. */
  private async known(
    source: EmbeddingSource,
    job: EmbeddingJob,
    hashes: string[],
  ): Promise<Map<string, StoredVector>> {
    const known = new Map<string, StoredVector>();
    for (let at = 0; at < hashes.length; at += HASHES_PER_LOOKUP) {
      const batch = hashes.slice(at, at + HASHES_PER_LOOKUP);
      for (const vector of await source.known(this.store.db, job.bot_id, job.model, batch))
        known.set(vector.content_hash, vector);
    }
    return known;
  }

  /**
   * Writes vectors of the job's item, if the claim still holds (an item queued again meanwhile has a job
   * of its own, unclaimed, and its texts may be others): answers whether it held.
   */
  private async write(
    owner: string,
    job: EmbeddingJob,
    source: EmbeddingSource,
    vectors: (StoredVector & { key: string })[],
  ): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const held = await trx
        .updateTable('embedding_jobs')
        .set({ updated_at: nowIso() })
        .where('id', '=', job.id)
        .where('model', '=', job.model)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (Number(held.numUpdatedRows) === 0) return false;
      if (vectors.length > 0) await source.write(trx, job.id, job.model, vectors);
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
