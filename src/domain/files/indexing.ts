import { buffer } from 'node:stream/consumers';
import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { fromJson } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';
import type { BlobStore } from './blob-store.ts';
import type { EmbeddingQueue } from '../embeddings/queue.ts';
import type { PassageDraft, PassageStore } from './passages.ts';
import { formatOf, UnindexableDocument } from './parsing/formats.ts';
import type { DocumentParser } from './parsing/parser.ts';
import type { ChunkingOptions } from './parsing/chunking.ts';
import type { NewPassage } from './schemas.ts';

/** The columns of a file whose indexing (or upload) starts over: no failure, no claim, no attempt yet. */
export const FRESH_JOB = {
  failure_reason: null,
  index_lease_owner: null,
  index_lease_until: null,
  index_attempts: 0,
} as const;

/** Files larger than this are not indexed (the hosted product's limit too). */
export const MAX_INDEXABLE_BYTES = 95 * 1024 * 1024;
/** An indexing whose process died this many times is given up: the document is the likely cause. */
export const MAX_INDEXING_ATTEMPTS = 3;

/**
 * The durable queue of indexing work. It is the files table itself: a file in `indexing_pending` is a
 * job, claimed with a lease (owner, until) by one indexer at a time. A claim whose process died lapses
 * and the file is claimed again, so indexing survives a crash; the passages are replaced in one
 * transaction, conditional on the claim, so a retried or overtaken indexing writes once or not at all.
 */
export class IndexingQueue {
  constructor(
    private readonly store: Store,
    private readonly passages: PassageStore,
    private readonly blobs: BlobStore,
    private readonly parser: DocumentParser,
    private readonly embedding: EmbeddingQueue,
  ) {}

  /** Claims up to `limit` files waiting for indexing, not claimed or with a lapsed claim. */
  /** Claims up to `limit` items; `more` tells whether others wait. */
  async claim(
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<{ items: Row<'files'>[]; more: boolean }> {
    const now = nowIso();
    const candidates = await this.store.db
      .selectFrom('files')
      .select('id')
      .where('status', '=', 'indexing_pending')
      .where((eb) => eb.or([eb('index_lease_until', 'is', null), eb('index_lease_until', '<', now)]))
      .orderBy('updated_at')
      .limit(limit + 1)
      .execute();
    const claimed: Row<'files'>[] = [];
    const until = new Date(Date.now() + leaseMs).toISOString();
    for (const { id } of candidates.slice(0, limit)) {
      // Conditional on the claim being free: of several processes, one wins each file.
      const row = await this.store.db
        .updateTable('files')
        .set((eb) => ({
          index_lease_owner: owner,
          index_lease_until: until,
          index_attempts: eb('index_attempts', '+', 1),
        }))
        .where('id', '=', id)
        .where('status', '=', 'indexing_pending')
        .where((eb) => eb.or([eb('index_lease_until', 'is', null), eb('index_lease_until', '<', now)]))
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(row);
    }
    return { items: claimed, more: candidates.length > limit };
  }

  async renew(owner: string, fileIds: string[], leaseMs: number): Promise<void> {
    if (fileIds.length === 0) return;
    await this.store.db
      .updateTable('files')
      .set({ index_lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', fileIds)
      .where('index_lease_owner', '=', owner)
      .execute();
  }

  /** Indexes one claimed file: its given passages, or its parsed content. Never throws for the document's sake. */
  async index(owner: string, row: Row<'files'>): Promise<void> {
    let drafts: PassageDraft[];
    try {
      if (row.index_attempts > MAX_INDEXING_ATTEMPTS) {
        throw new UnindexableDocument(
          `Indexing was interrupted ${MAX_INDEXING_ATTEMPTS} times; it is not tried again`,
        );
      }
      drafts = row.pending_passages !== null ? given(row.pending_passages) : await this.parse(row);
    } catch (err) {
      if (!(err instanceof UnindexableDocument)) throw err;
      await this.finish(owner, row, { status: 'indexing_failed', failure_reason: err.message });
      return;
    }
    await this.finish(owner, row, { status: 'indexing_completed', failure_reason: null }, drafts);
  }

  /**
   * At start: when this process alone uses the database, every claim was made by an earlier run of this
   * very process, so none holds any more. Where processes share it, other processes' claims are theirs.
   */
  async releaseStaleClaims(): Promise<void> {
    if (!this.store.sql.oneProcess) return;
    await this.store.db
      .updateTable('files')
      .set({ index_lease_owner: null, index_lease_until: null })
      .where('status', '=', 'indexing_pending')
      .where('index_lease_owner', 'is not', null)
      .execute();
  }

  private async parse(row: Row<'files'>): Promise<PassageDraft[]> {
    const format = formatOf(row.content_type, row.key);
    if (!format) throw new UnindexableDocument(`Files of type ${row.content_type} cannot be indexed`);
    if (!row.blob_id) throw new UnindexableDocument('The file has no content to index');
    if (row.size > MAX_INDEXABLE_BYTES) {
      throw new UnindexableDocument(`Files larger than ${MAX_INDEXABLE_BYTES} bytes cannot be indexed`);
    }
    const data = await buffer(this.blobs.read(row.blob_id, row.bot_id));
    return this.parser.parse({ format, data, chunking: chunkingOf(row) });
  }

  /** Stores the outcome, if the claim still holds (the file was not upserted or deleted meanwhile). */
  private async finish(
    owner: string,
    row: Row<'files'>,
    outcome: { status: 'indexing_completed' | 'indexing_failed'; failure_reason: string | null },
    drafts?: PassageDraft[],
  ): Promise<void> {
    const stored = await this.store.db.transaction().execute(async (trx) => {
      const held = await trx
        .updateTable('files')
        .set({
          ...outcome,
          indexing_stack: outcome.status === 'indexing_completed' ? 'v2' : null,
          pending_passages: null,
          index_lease_owner: null,
          index_lease_until: null,
          updated_at: nowIso(),
        })
        .where('id', '=', row.id)
        .where('status', '=', 'indexing_pending')
        .where('index_lease_owner', '=', owner)
        .executeTakeFirst();
      if (Number(held.numUpdatedRows) === 0) return false;
      if (drafts) await this.passages.replace(trx, row.id, drafts);
      else await this.passages.drop(trx, [row.id]);
      return drafts !== undefined;
    });
    // Searchable by their words from now on; by their meaning once embedded, off this job.
    if (stored) this.embedding.notify();
  }
}

function given(json: string): PassageDraft[] {
  return fromJson<NewPassage[]>(json).map((p) => ({
    type: p.type ?? 'paragraph',
    content: p.content,
    ...(p.pageNumber !== undefined && { pageNumber: p.pageNumber }),
  }));
}

/** The chunking options of `indexing.configuration`, when the upsert gave any. */
function chunkingOf(row: Row<'files'>): Partial<ChunkingOptions> {
  if (row.indexing_config === null) return {};
  const config = fromJson<{
    chunking?: { maximumChunkLength?: unknown };
    parsing?: { minimumParagraphLength?: unknown };
  }>(row.indexing_config);
  const number = (value: unknown, min: number, max: number) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? value : undefined;
  const max = number(config.chunking?.maximumChunkLength, 100, 5000);
  const min = number(config.parsing?.minimumParagraphLength, 0, 2000);
  return {
    ...(max !== undefined && { maximumChunkLength: max }),
    ...(min !== undefined && { minimumParagraphLength: min }),
  };
}
