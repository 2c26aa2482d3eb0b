import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { ApiError, forbidden, notFound } from '../shared/errors.ts';
import { nowIso } from '../shared/time.ts';
import type { BlobStore, ByteRange } from './blob-store.ts';
import { Files, policiesOf, SIGNED } from './files.ts';
import { DEFAULT_CONTENT_TYPE, isValidContentType } from './content-types.ts';
import { FRESH_JOB } from './indexing.ts';
import type { UrlSigner } from './signing.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { File } from './schemas.ts';

/** The signature part of a signed URL, as its query string gives it. */
export interface UrlSignature {
  expires?: string | undefined;
  signature?: string | undefined;
}

/** A stored content, ready to be sent (whole or a range). */
export interface Downloadable {
  contentType: string;
  size: number;
  /** A strong validator: the content's SHA-256. */
  etag: string;
  fileName: string;
  read(range?: ByteRange): Readable;
}

/** A URL's signature part that may be checked: an expiry in seconds and a signature. */
function isSignature(auth: UrlSignature): auth is { expires: string; signature: string } {
  return auth.expires !== undefined && auth.signature !== undefined && /^\d{1,12}$/.test(auth.expires);
}

const uploadUrlUsed = () =>
  forbidden(
    'This upload URL was used already or the file changed since: upsert the file again for a new upload URL',
  );

/** An upload that breaks its promise (size) or a limit: the file is marked `upload_failed` with the reason. */
class UploadRefused extends Error {
  constructor(
    readonly type: 'PayloadTooLarge' | 'InvalidPayload',
    message: string,
  ) {
    super(message);
  }
}

/**
 * File contents in and out: the upload PUT to a signed URL, streamed through a meter and a hash into
 * the blob store (never whole in memory), and downloads through signed or public URLs.
 */
export class FileContents {
  constructor(
    private readonly store: Store,
    private readonly files: Files,
    private readonly blobs: BlobStore,
    private readonly signer: UrlSigner,
  ) {}

  /**
   * Stores the body of a PUT to a file's upload URL. Nothing is stored unless the URL's signature
   * holds for the file as it is now (an upsert since then voids it) and the bytes are exactly the
   * declared size. Answers the content's ETag.
   */
  async receive(
    fileId: string,
    auth: UrlSignature,
    declaredLength: number | undefined,
    body: AsyncIterable<Uint8Array>,
  ): Promise<{ etag: string }> {
    const row = await this.files.rowById(this.store.db, fileId);
    if (!row || !(await this.verify(SIGNED.upload(row), auth))) {
      throw forbidden('This upload URL is invalid or has expired: upsert the file again for a new one');
    }
    if (row.blob_id !== null) throw uploadUrlUsed();
    return this.accept(row, declaredLength, body);
  }

  /**
   * Creates (or resets) the file of `key` with content the server made (a table's export), as an upsert
   * then an upload would: the same checks, limits and quota.
   */
  async put(
    actor: BotActor,
    file: { key: string; contentType: string; size: number },
    body: AsyncIterable<Uint8Array>,
  ): Promise<File> {
    const { id } = await this.files.upsert(actor, file);
    await this.accept(await this.files.requireRowById(this.store.db, id), file.size, body);
    return this.files.get(actor, id);
  }

  /** The content of a file the actor may read (a table's import reads its file so). */
  async open(actor: BotActor, idOrKey: string): Promise<Downloadable & { id: string }> {
    const row = await this.files.requireRow(actor, idOrKey);
    return { ...this.downloadable(row, idOrKey), id: row.id };
  }

  private async accept(
    row: Row<'files'>,
    declaredLength: number | undefined,
    body: AsyncIterable<Uint8Array>,
  ): Promise<{ etag: string }> {
    if (declaredLength !== undefined && declaredLength > row.size) {
      await this.fail(row, `The upload has ${declaredLength} bytes; the file was declared with ${row.size}`);
      throw new ApiError(
        'PayloadTooLarge',
        `The file was declared with ${row.size} bytes; this upload has more`,
      );
    }
    const blobId = await this.files.startBlob(row.bot_id, row.size);
    const hash = createHash('sha256');
    const declared = row.size;
    let received = 0;
    async function* metered(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        received += chunk.byteLength;
        if (received > declared) {
          throw new UploadRefused(
            'PayloadTooLarge',
            `The upload has more bytes than the ${declared} declared`,
          );
        }
        hash.update(chunk);
        yield chunk;
      }
    }
    try {
      await this.blobs.write(blobId, row.bot_id, metered());
      if (received !== row.size) {
        throw new UploadRefused(
          'InvalidPayload',
          `The upload has ${received} bytes; the file was declared with ${row.size}`,
        );
      }
    } catch (err) {
      await this.files.freeBlobs([await this.files.markBlobDead(this.store.db, blobId)]);
      const reason = err instanceof UploadRefused ? err.message : 'The upload was interrupted';
      await this.fail(row, reason);
      if (err instanceof UploadRefused) throw new ApiError(err.type, err.message);
      throw err;
    }
    const sha256 = hash.digest('hex');
    const stored = await this.complete(row, blobId, sha256);
    if (!stored) {
      await this.files.freeBlobs([await this.files.markBlobDead(this.store.db, blobId)]);
      throw uploadUrlUsed();
    }
    if (row.index_requested === 1) this.files.notifyIndexing();
    return { etag: sha256 };
  }

  /**
   * The content behind a signed download URL: the one it was made for. A file reset since (upserted
   * again) has a new content, which the old URL does not serve.
   */
  async download(fileId: string, auth: UrlSignature): Promise<Downloadable> {
    const invalid = () =>
      forbidden(
        'This download URL is invalid, has expired, or is for content that was replaced: get the file again for a new one',
      );
    if (!isSignature(auth)) throw invalid();
    const row = await this.files.rowById(this.store.db, fileId);
    if (row && !(await this.verify(SIGNED.download(row), auth))) throw invalid();
    return this.downloadable(row, fileId);
  }

  /** The content of a file with the `public_content` policy: anyone may read it. */
  async downloadPublic(fileId: string): Promise<Downloadable> {
    const row = await this.files.rowById(this.store.db, fileId);
    return this.downloadable(row && policiesOf(row).includes('public_content') ? row : undefined, fileId);
  }

  private downloadable(row: Row<'files'> | undefined, fileId: string): Downloadable {
    if (!row) throw notFound('File', fileId);
    const { blob_id: blobId, sha256 } = row;
    if (!blobId || !sha256) throw notFound('Content of file', fileId);
    return {
      // A type stored before types were checked at upsert may be anything: then the bytes are just bytes.
      contentType: isValidContentType(row.content_type) ? row.content_type : DEFAULT_CONTENT_TYPE,
      size: row.size,
      etag: sha256,
      fileName: Files.fileName(row.key),
      read: (range) => this.blobs.read(blobId, row.bot_id, range),
    };
  }

  private async verify(parts: string[], auth: UrlSignature): Promise<boolean> {
    if (!isSignature(auth)) return false;
    return this.signer.verify(parts, Number(auth.expires), auth.signature);
  }

  /**
   * Points the file at its new content, if the upload URL still is the file's (no upsert since) and
   * has not been used: an upload URL stores one content, once.
   */
  private async complete(row: Row<'files'>, blobId: string, sha256: string): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      // One conditional statement: of two uploads finishing at once, the second finds the content set
      // (Postgres evaluates the condition again once the first commits).
      const { numUpdatedRows } = await trx
        .updateTable('files')
        .set({
          blob_id: blobId,
          sha256,
          status: row.index_requested === 1 ? 'indexing_pending' : 'upload_completed',
          pending_passages: null,
          ...FRESH_JOB,
          updated_at: nowIso(),
        })
        .where('id', '=', row.id)
        .where('upload_nonce', '=', row.upload_nonce)
        .where('blob_id', 'is', null)
        .executeTakeFirst();
      if (numUpdatedRows === 0n) return false;
      await trx.updateTable('file_blobs').set({ state: 'stored' }).where('id', '=', blobId).execute();
      return true;
    });
  }

  private async fail(row: Row<'files'>, reason: string): Promise<void> {
    await this.store.db
      .updateTable('files')
      .set({ status: 'upload_failed', failure_reason: reason, updated_at: nowIso() })
      .where('id', '=', row.id)
      .where('upload_nonce', '=', row.upload_nonce)
      .where('blob_id', 'is', null)
      .execute();
  }
}
