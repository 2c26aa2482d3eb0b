import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { RawBuilder, SqlBool, Transaction } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { toCount } from '../../store/index.ts';
import type { Database, NewRow, Row } from '../../store/schema.ts';
import type { Links } from '../bots/links.ts';
import type { BotActor } from '../workspace/actors.ts';
import { ApiError, alreadyExists, invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, mergeMap, toJson, withoutNulls } from '../shared/json.ts';
import { withKeyLock } from '../shared/locks.ts';
import { Keyset, pageSizeOf, valuePage, valueToken } from '../shared/pagination.ts';
import type { Page, PageRequest, SortDirection } from '../shared/pagination.ts';
import { applyTagChanges, insertTags, deleteTags, loadTags } from '../shared/tags.ts';
import type { Tags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import { ownerObject, ownerOf, requireOwner, visibleFiles } from './access.ts';
import { FRESH_JOB } from './indexing.ts';
import type { BlobStore } from './blob-store.ts';
import { contentTypeOf, isValidContentType } from './content-types.ts';
import type { PassageStore } from './passages.ts';
import {
  MAX_PASSAGES_PER_FILE,
  MAX_IDS_FILTER,
  PASSAGES_PAGE_DEFAULT,
  PASSAGES_PAGE_MAX,
} from './schemas.ts';
import type {
  File,
  NewPassage,
  Passage,
  UpdateFileMetadataBody,
  UploadableFile,
  UpsertFileBody,
  TagFilter,
} from './schemas.ts';
import type { UrlSigner } from './signing.ts';
import { tagFilterConditions } from './tag-filter.ts';
import type { FileAccessPolicy, FileStatus } from '../../value-sets.ts';

export interface FilesLimits {
  /** The largest content one file may have, in bytes. */
  maxFileBytes: number;
  /** The bytes all of one bot's files may take together. */
  botStorageBytes: number;
}

/** How long the URLs handed out stay valid. */
export const UPLOAD_URL_SECONDS = 3600;
export const DOWNLOAD_URL_SECONDS = 3600;
/** Download URLs expire on a grid of this many seconds, so reads close together hand out the same URL. */
const DOWNLOAD_URL_GRID_SECONDS = 300;
const MAX_EXPIRY_MS = 90 * 24 * 3600 * 1000;
/** Blobs whose upload started this long ago and never finished are freed. */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

const SORT_COLUMNS = {
  key: 'key',
  size: 'size',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  status: 'status',
} as const;
export type FileSortField = keyof typeof SORT_COLUMNS;

export interface ListFilesQuery extends PageRequest {
  sortField?: FileSortField;
  sortDirection?: SortDirection;
  tags?: TagFilter;
  ids?: string[];
  indexed?: boolean;
}

export interface CopyOptions {
  overwrite?: boolean;
  /** A bot of the caller's workspace; default: the caller's own. */
  destinationBotId?: string;
}

/** Where file contents come and go: the routes of `/file-content`, relative to the content origin. */
export const CONTENT_PREFIX = '/file-content';
export const CONTENT_PATHS = {
  upload: (fileId: string) => `${CONTENT_PREFIX}/${encodeURIComponent(fileId)}/upload`,
  download: (fileId: string) => `${CONTENT_PREFIX}/${encodeURIComponent(fileId)}`,
  public: (fileId: string) => `${CONTENT_PREFIX}/public/${encodeURIComponent(fileId)}`,
};

/**
 * What a signature of each kind of URL covers. The upload nonce is new at each upsert of the file, so it
 * names the content: a download link made before a reset of the file does not serve what came after.
 */
export const SIGNED = {
  upload: (row: Pick<Row<'files'>, 'id' | 'upload_nonce'>) => ['upload', row.id, row.upload_nonce],
  download: (row: Pick<Row<'files'>, 'id' | 'upload_nonce'>) => ['download', row.id, row.upload_nonce],
};

const STATUSES_WITH_CONTENT: FileStatus[] = [
  'upload_completed',
  'indexing_pending',
  'indexing_failed',
  'indexing_completed',
];

/** The bot's files: records, tags, access, quotas and expiry. Contents: see FileContents. */
export class Files {
  private readonly indexingWaiters = new Set<() => void>();

  constructor(
    private readonly store: Store,
    private readonly passages: PassageStore,
    private readonly blobs: BlobStore,
    readonly signer: UrlSigner,
    private readonly links: Links,
    readonly limits: FilesLimits,
  ) {}

  /** Called when a file is queued for indexing, so the indexer need not wait for its next poll. */
  onIndexingQueued(wake: () => void): () => void {
    this.indexingWaiters.add(wake);
    return () => this.indexingWaiters.delete(wake);
  }

  notifyIndexing(): void {
    for (const wake of this.indexingWaiters) wake();
  }

  // Reading

  /** A file the actor may see, by id or key (its own key first); another bot's files do not exist. */
  async requireRow(actor: BotActor, idOrKey: string, db: Executor = this.store.db): Promise<Row<'files'>> {
    const owner = ownerOf(actor);
    const { rows } = await sql<Row<'files'>>`select * from files
      where ${visibleFiles(actor)} and (files.id = ${idOrKey} or files.key = ${idOrKey})
      order by case when files.id = ${idOrKey} then 0 when files.owner = ${owner} then 1 else 2 end
      limit 1`.execute(db);
    const row = rows[0];
    if (!row) throw notFound('File', idOrKey);
    return row;
  }

  async get(actor: BotActor, idOrKey: string): Promise<File> {
    return this.toFile(await this.requireRow(actor, idOrKey));
  }

  async list(actor: BotActor, query: ListFilesQuery): Promise<Page<File>> {
    const pageSize = pageSizeOf(query);
    const sortField = query.sortField ?? 'createdAt';
    const column = `files.${SORT_COLUMNS[sortField]}`;
    const keyset = new Keyset(column, query.sortDirection ?? 'desc', 'files.id');
    const cursor = keyset.decode(query.nextToken);
    if (query.ids && query.ids.length > MAX_IDS_FILTER) {
      throw invalidPayload(`ids may name at most ${MAX_IDS_FILTER} files`);
    }
    const conditions: RawBuilder<SqlBool>[] = [
      visibleFiles(actor),
      ...tagFilterConditions(query.tags, 'files.id'),
      ...(query.ids
        ? [query.ids.length ? sql<SqlBool>`files.id in (${sql.join(query.ids)})` : sql<SqlBool>`1 = 0`]
        : []),
      ...(query.indexed === undefined
        ? []
        : [sql<SqlBool>`files.index_requested = ${query.indexed ? 1 : 0}`]),
      ...(cursor ? [keyset.after(cursor)] : []),
    ];
    const order = sql.raw(keyset.direction);
    const { rows } = await sql<Row<'files'>>`select * from files where ${sql.join(conditions, sql` and `)}
      order by ${sql.ref(column)} ${order}, files.id ${order} limit ${pageSize + 1}`.execute(this.store.db);
    const page = keyset.page(rows, pageSize, (row) => [String(row[SORT_COLUMNS[sortField]]), row.id]);
    return { ...page, items: await this.toFiles(page.items) };
  }

  /** The distinct tag keys of the files the actor sees. */
  async listTags(actor: BotActor, request: PageRequest): Promise<Page<string>> {
    const pageSize = pageSizeOf(request);
    const after = valueToken.decode(request.nextToken);
    const { rows } = await sql<{ key: string }>`select distinct tags.key as key from tags
      join files on files.id = tags.resource_id
      where ${visibleFiles(actor)} ${after === undefined ? sql`` : sql`and tags.key > ${after}`}
      order by tags.key limit ${pageSize + 1}`.execute(this.store.db);
    const page = valuePage(rows, pageSize, (r) => r.key);
    return { ...page, items: page.items.map((r) => r.key) };
  }

  /** The distinct values of one tag among the files the actor sees. */
  async listTagValues(actor: BotActor, tag: string, request: PageRequest): Promise<Page<string>> {
    const pageSize = pageSizeOf(request);
    const after = valueToken.decode(request.nextToken);
    const { rows } = await sql<{ value: string }>`select distinct tags.value as value from tags
      join files on files.id = tags.resource_id
      where ${visibleFiles(actor)} and tags.key = ${tag}
      ${after === undefined ? sql`` : sql`and tags.value > ${after}`}
      order by tags.value limit ${pageSize + 1}`.execute(this.store.db);
    const page = valuePage(rows, pageSize, (r) => r.value);
    return { ...page, items: page.items.map((r) => r.value) };
  }

  // Writing

  /**
   * Creates the file of a key, or resets the one that has it (its content is erased: a new upload is
   * needed). Answers the file with the URL its content is to be PUT to.
   */
  async upsert(actor: BotActor, body: UpsertFileBody): Promise<UploadableFile> {
    if (body.size > this.limits.maxFileBytes) {
      throw new ApiError(
        'LimitExceeded',
        `size ${body.size} exceeds the largest file this server accepts (${this.limits.maxFileBytes} bytes)`,
      );
    }
    if (body.contentType !== undefined && !isValidContentType(body.contentType)) {
      // Sent back as a header at each download: nothing but a media type may be stored.
      throw invalidPayload(
        'contentType must be a media type: type/subtype, then any "; name=value" parameters, each part of RFC 9110 token characters (no quotes, control characters or line breaks)',
      );
    }
    const expiresAt = body.expiresAt === undefined ? undefined : validExpiry(body.expiresAt);
    const owner = ownerOf(actor);
    const now = nowIso();
    const { row, freed } = await withKeyLock(this.store, `files:${actor.botId}`, undefined, async (trx) => {
      const existing = await trx
        .selectFrom('files')
        .selectAll()
        .where('bot_id', '=', actor.botId)
        .where('owner', '=', owner)
        .where('key', '=', body.key)
        .executeTakeFirst();
      await this.requireQuota(trx, actor.botId, body.size, existing?.id);
      const fields = {
        content_type: body.contentType ?? contentTypeOf(body.key),
        size: body.size,
        sha256: null,
        blob_id: null,
        upload_nonce: randomBytes(12).toString('base64url'),
        status: 'upload_pending' as const,
        index_requested: body.index ? (1 as const) : (0 as const),
        indexing_config: body.indexing ? toJson(body.indexing.configuration) : null,
        indexing_stack: null,
        pending_passages: null,
        ...FRESH_JOB,
        updated_at: now,
      };
      if (!existing) {
        const row: NewRow<'files'> = {
          id: newId('file'),
          bot_id: actor.botId,
          owner,
          key: body.key,
          ...fields,
          access_policies: toJson(body.accessPolicies ?? []),
          metadata: toJson(withoutNulls(body.metadata)),
          expires_at: expiresAt ?? null,
          created_at: now,
        };
        await trx.insertInto('files').values(row).execute();
        await insertTags(trx, row.id, body.tags ?? {});
        return { row: await this.requireRowById(trx, row.id), freed: undefined };
      }
      // Same key: the same record, its content erased; what the upsert does not give is kept.
      await this.passages.drop(trx, [existing.id]);
      await trx
        .updateTable('files')
        .set({
          ...fields,
          ...(body.accessPolicies && { access_policies: toJson(body.accessPolicies) }),
          ...(body.metadata && { metadata: toJson(withoutNulls(body.metadata)) }),
          ...(expiresAt !== undefined && { expires_at: expiresAt }),
        })
        .where('id', '=', existing.id)
        .execute();
      if (body.tags) {
        await deleteTags(trx, [existing.id]);
        await applyTagChanges(trx, existing.id, body.tags);
      }
      const freed = existing.blob_id ? await this.markBlobDead(trx, existing.blob_id) : undefined;
      return { row: await this.requireRowById(trx, existing.id), freed };
    });
    await this.freeBlobs(freed ? [freed] : []);
    const file = await this.toFile(row);
    return { ...file, uploadUrl: await this.uploadUrl(row) };
  }

  async updateMetadata(actor: BotActor, idOrKey: string, body: UpdateFileMetadataBody): Promise<File> {
    const expiresAt =
      body.expiresAt === undefined || body.expiresAt === null ? body.expiresAt : validExpiry(body.expiresAt);
    const row = await this.store.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, idOrKey, trx);
      requireOwner(actor, row);
      await trx
        .updateTable('files')
        .set({
          updated_at: nowIso(),
          ...(body.metadata && {
            metadata: toJson(mergeMap(fromJson<Record<string, unknown>>(row.metadata), body.metadata)),
          }),
          ...(body.accessPolicies && { access_policies: toJson(body.accessPolicies) }),
          ...(expiresAt !== undefined && { expires_at: expiresAt }),
        })
        .where('id', '=', row.id)
        .execute();
      await applyTagChanges(trx, row.id, body.tags ?? {});
      return this.requireRowById(trx, row.id);
    });
    return this.toFile(row);
  }

  async delete(actor: BotActor, idOrKey: string): Promise<void> {
    const freed = await this.store.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, idOrKey, trx);
      requireOwner(actor, row);
      return this.remove(trx, row);
    });
    await this.freeBlobs(freed ? [freed] : []);
  }

  /**
   * Copies a file (content, tags, metadata, passages) to another key of the bot, or of another bot of
   * the workspace. A taken key is an error unless `overwrite`, and then only the caller's own file.
   */
  async copy(actor: BotActor, idOrKey: string, destinationKey: string, options: CopyOptions): Promise<File> {
    const source = await this.requireRow(actor, idOrKey);
    if (!source.blob_id || !STATUSES_WITH_CONTENT.includes(source.status)) {
      throw invalidPayload(`File "${source.key}" has no content yet (${source.status}): upload it first`);
    }
    const botId = options.destinationBotId ?? actor.botId;
    if (botId !== actor.botId) {
      const bot = await this.store.db
        .selectFrom('bots')
        .select('id')
        .where('id', '=', botId)
        .where('workspace_id', '=', actor.workspaceId)
        .executeTakeFirst();
      if (!bot) throw notFound('Bot', botId);
    }
    const destination: BotActor = { ...actor, botId };
    const owner = ownerOf(destination);
    const blobId = await this.startBlob(botId, source.size);
    try {
      await this.blobs.write(blobId, botId, this.blobs.read(source.blob_id, source.bot_id));
    } catch (err) {
      await this.freeBlobs([await this.markBlobDead(this.store.db, blobId)]);
      throw err;
    }
    const tags = (await loadTags(this.store.db, [source.id])).get(source.id) ?? {};
    const now = nowIso();
    const indexed = source.status === 'indexing_completed';
    let freed: BlobRef[] = [];
    let row: Row<'files'>;
    try {
      row = await withKeyLock(this.store, `files:${botId}`, undefined, async (trx) => {
        const taken = await trx
          .selectFrom('files')
          .selectAll()
          .where('bot_id', '=', botId)
          .where('owner', '=', owner)
          .where('key', '=', destinationKey)
          .executeTakeFirst();
        if (taken) {
          if (!options.overwrite) {
            throw alreadyExists(`A file with key "${destinationKey}" exists: pass overwrite to replace it`);
          }
          requireOwner(actor, taken);
        }
        await this.requireQuota(trx, botId, source.size, taken?.id);
        const old = taken ? await this.remove(trx, taken) : undefined;
        const id = newId('file');
        await trx
          .insertInto('files')
          .values({
            ...source,
            id,
            bot_id: botId,
            owner,
            key: destinationKey,
            blob_id: blobId,
            upload_nonce: randomBytes(12).toString('base64url'),
            status: indexed
              ? 'indexing_completed'
              : source.index_requested
                ? 'indexing_pending'
                : 'upload_completed',
            pending_passages: null,
            ...FRESH_JOB,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await applyTagChanges(trx, id, tags);
        if (indexed) await this.passages.copy(trx, source.id, id);
        await trx.updateTable('file_blobs').set({ state: 'stored' }).where('id', '=', blobId).execute();
        freed = old ? [old] : [];
        return this.requireRowById(trx, id);
      });
    } catch (err) {
      freed = [await this.markBlobDead(this.store.db, blobId)];
      throw err;
    } finally {
      await this.freeBlobs(freed);
    }
    if (row.status === 'indexing_pending') this.notifyIndexing();
    return this.toFile(row);
  }

  // Passages

  async listPassages(
    actor: BotActor,
    idOrKey: string,
    request: PageRequest & { limit?: number },
  ): Promise<Page<Passage>> {
    const row = await this.requireRow(actor, idOrKey);
    const pageSize = request.pageSize ?? request.limit ?? PASSAGES_PAGE_DEFAULT;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PASSAGES_PAGE_MAX) {
      throw invalidPayload(`limit must be an integer from 1 to ${PASSAGES_PAGE_MAX}`);
    }
    return this.passages.page(row.id, pageSize, request.nextToken);
  }

  /** Replaces a file's passages with the caller's: stored by the indexer, as a parsed content would be. */
  async setPassages(actor: BotActor, idOrKey: string, passages: NewPassage[]): Promise<void> {
    if (passages.length > MAX_PASSAGES_PER_FILE) {
      throw invalidPayload(`A file has at most ${MAX_PASSAGES_PER_FILE} passages`);
    }
    await this.store.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, idOrKey, trx);
      requireOwner(actor, row);
      await trx
        .updateTable('files')
        .set({
          pending_passages: toJson(passages),
          status: 'indexing_pending',
          index_requested: 1,
          ...FRESH_JOB,
          updated_at: nowIso(),
        })
        .where('id', '=', row.id)
        .execute();
    });
    this.notifyIndexing();
  }

  // Housekeeping

  /** Deletes the files whose `expiresAt` has passed; answers how many. */
  async expireDue(now = nowIso()): Promise<number> {
    const due = await this.store.db
      .selectFrom('files')
      .selectAll()
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .limit(100)
      .execute();
    const freed: BlobRef[] = [];
    for (const row of due) {
      const blob = await this.store.db.transaction().execute(async (trx) => {
        const still = await trx
          .selectFrom('files')
          .selectAll()
          .where('id', '=', row.id)
          .where('expires_at', '<=', now)
          .executeTakeFirst();
        return still ? ((await this.remove(trx, still)) ?? null) : undefined;
      });
      if (blob) freed.push(blob);
    }
    await this.freeBlobs(freed);
    return due.length;
  }

  /**
   * Frees the bytes of dead blobs, of uploads that never finished, and of deleted bots' files (their
   * rows went with the bot); answers how many blobs were freed.
   */
  async sweepBlobs(now = Date.now()): Promise<number> {
    const stale = new Date(now - STALE_UPLOAD_MS).toISOString();
    const { rows } = await sql<BlobRef>`select id, bot_id from file_blobs
      where state = 'dead' or (state = 'writing' and created_at < ${stale})
        or not exists (select 1 from bots where bots.id = file_blobs.bot_id)
      limit 200`.execute(this.store.db);
    await this.freeBlobs(rows);
    return rows.length;
  }

  // Blobs

  /** Registers a blob about to be written (so that an interrupted write is found and freed). */
  async startBlob(botId: string, size: number): Promise<string> {
    const id = newId('fileBlob');
    await this.store.db
      .insertInto('file_blobs')
      .values({ id, bot_id: botId, state: 'writing', size, created_at: nowIso() })
      .execute();
    return id;
  }

  async markBlobDead(db: Executor, blobId: string): Promise<BlobRef> {
    const row = await db
      .updateTable('file_blobs')
      .set({ state: 'dead' })
      .where('id', '=', blobId)
      .returning(['id', 'bot_id'])
      .executeTakeFirst();
    return row ?? { id: blobId, bot_id: '' };
  }

  /** Frees blobs' bytes, then forgets them. A failure leaves them dead: the next sweep tries again. */
  async freeBlobs(blobs: BlobRef[]): Promise<void> {
    for (const blob of blobs) {
      try {
        await this.blobs.delete(blob.id, blob.bot_id);
        await this.store.db.deleteFrom('file_blobs').where('id', '=', blob.id).execute();
      } catch {
        // left for the sweep
      }
    }
  }

  // URLs and answers

  async uploadUrl(row: Pick<Row<'files'>, 'id' | 'upload_nonce'>): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + UPLOAD_URL_SECONDS;
    const signature = await this.signer.sign(SIGNED.upload(row), expires);
    return `${this.links.contentBaseUrl}${CONTENT_PATHS.upload(row.id)}?expires=${expires}&signature=${signature}`;
  }

  async downloadUrl(row: Pick<Row<'files'>, 'id' | 'upload_nonce' | 'access_policies'>): Promise<string> {
    if (policiesOf(row).includes('public_content'))
      return `${this.links.contentBaseUrl}${CONTENT_PATHS.public(row.id)}`;
    const grid = DOWNLOAD_URL_GRID_SECONDS;
    const expires = Math.ceil((Date.now() / 1000 + DOWNLOAD_URL_SECONDS) / grid) * grid;
    const signature = await this.signer.sign(SIGNED.download(row), expires);
    return `${this.links.contentBaseUrl}${CONTENT_PATHS.download(row.id)}?expires=${expires}&signature=${signature}`;
  }

  async toFile(row: Row<'files'>, tags?: Tags): Promise<File> {
    const fileTags = tags ?? (await loadTags(this.store.db, [row.id])).get(row.id) ?? {};
    return {
      id: row.id,
      botId: row.bot_id,
      key: row.key,
      url: await this.downloadUrl(row),
      size: STATUSES_WITH_CONTENT.includes(row.status) ? row.size : null,
      contentType: row.content_type,
      tags: fileTags,
      metadata: fromJson(row.metadata),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      accessPolicies: policiesOf(row),
      index: row.index_requested === 1,
      status: row.status,
      ...(row.failure_reason !== null && { failedStatusReason: row.failure_reason }),
      ...(row.expires_at !== null && { expiresAt: row.expires_at }),
      owner: ownerObject(row),
      ...(row.indexing_stack !== null && { indexingStack: row.indexing_stack }),
    };
  }

  async toFiles(rows: Row<'files'>[]): Promise<File[]> {
    const tags = await loadTags(
      this.store.db,
      rows.map((r) => r.id),
    );
    return Promise.all(rows.map((r) => this.toFile(r, tags.get(r.id) ?? {})));
  }

  async requireRowById(db: Executor, id: string): Promise<Row<'files'>> {
    return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  /** The file's row, or undefined when there is none: a store that fails throws, never reads as absent. */
  async rowById(db: Executor, id: string): Promise<Row<'files'> | undefined> {
    return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The last segment of a key: the name a download is saved under. */
  static fileName(key: string): string {
    return path.posix.basename(key) || 'file';
  }

  private async requireQuota(trx: Executor, botId: string, size: number, replacing?: string): Promise<void> {
    const row = await trx
      .selectFrom('files')
      .select((eb) => eb.fn.sum<string | number>('size').as('used'))
      .where('bot_id', '=', botId)
      .where('status', '!=', 'upload_failed')
      .$if(replacing !== undefined, (q) => q.where('id', '!=', replacing as string))
      .executeTakeFirst();
    const used = toCount(row?.used);
    if (used + size > this.limits.botStorageBytes) {
      throw new ApiError(
        'QuotaExceeded',
        `The bot's files would take ${used + size} bytes; its storage limit is ${this.limits.botStorageBytes} bytes`,
      );
    }
  }

  /** Deletes a file's record, tags and passages (in `trx`); answers its blob, to free after the commit. */
  /**
   * Deletes the actor's own files that carry these tags (a knowledge base's), with their passages and
   * vectors, in the caller's transaction: answers the blobs to free once it commits.
   */
  async removeTagged(trx: Transaction<Database>, actor: BotActor, tags: Tags): Promise<BlobRef[]> {
    const { rows } = await sql<Row<'files'>>`select * from files
      where ${sql.join([visibleFiles(actor), sql`files.owner = ${ownerOf(actor)}`, ...tagFilterConditions(tags, 'files.id')], sql` and `)}`.execute(
      trx,
    );
    const freed: BlobRef[] = [];
    for (const row of rows) {
      const blob = await this.remove(trx, row);
      if (blob) freed.push(blob);
    }
    return freed;
  }

  private async remove(trx: Transaction<Database>, row: Row<'files'>): Promise<BlobRef | undefined> {
    await this.passages.drop(trx, [row.id]);
    // Its vectors go with its passages (foreign key); its embedding work with it.
    await trx.deleteFrom('embedding_jobs').where('id', '=', row.id).execute();
    await deleteTags(trx, [row.id]);
    await trx.deleteFrom('files').where('id', '=', row.id).execute();
    return row.blob_id ? this.markBlobDead(trx, row.blob_id) : undefined;
  }
}

export interface BlobRef {
  id: string;
  bot_id: string;
}

export function policiesOf(row: Pick<Row<'files'>, 'access_policies'>): FileAccessPolicy[] {
  return fromJson<FileAccessPolicy[]>(row.access_policies);
}

/** `expiresAt` to the minute (seconds are ignored, as the hosted API does); in the future and within 90 days. */
export function validExpiry(value: string): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalidPayload('expiresAt must be an ISO 8601 date-time');
  date.setUTCSeconds(0, 0);
  const now = Date.now();
  if (date.getTime() <= now) throw invalidPayload('expiresAt must be in the future');
  if (date.getTime() > now + MAX_EXPIRY_MS)
    throw invalidPayload('expiresAt must be at most 90 days from now');
  return date.toISOString();
}
