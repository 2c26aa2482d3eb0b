import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../../store/index.ts';

/** A byte range of a blob, both ends included (as HTTP ranges count). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where file contents live. Writes and reads stream: no content is ever held whole in memory.
 * A blob is written once under a new id and never changed; replacing a content writes a new blob.
 */
export interface BlobStore {
  /** Writes the source to a new blob; throws (leaving nothing readable) when the source does. */
  write(blobId: string, botId: string, source: AsyncIterable<Uint8Array>): Promise<void>;
  read(blobId: string, botId: string, range?: ByteRange): Readable;
  /** Frees a blob's bytes (no error when there are none). */
  delete(blobId: string, botId: string): Promise<void>;
}

/** Blobs as files of a folder (the embedded default: one process owns the data folder). */
export class FolderBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private path(blobId: string, botId: string): string {
    return path.join(this.root, botId, blobId);
  }

  async write(blobId: string, botId: string, source: AsyncIterable<Uint8Array>): Promise<void> {
    const target = this.path(blobId, botId);
    const partial = `${target}.part`;
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await pipeline(Readable.from(source), createWriteStream(partial));
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  read(blobId: string, botId: string, range?: ByteRange): Readable {
    return createReadStream(this.path(blobId, botId), range ?? {});
  }

  async delete(blobId: string, botId: string): Promise<void> {
    await rm(this.path(blobId, botId), { force: true });
    await rm(`${this.path(blobId, botId)}.part`, { force: true });
  }
}

/**
 * Chunks of this size are one row each. Small enough that the driver's text form of a chunk (hex, twice
 * its size) stays a young object that is collected at once, rather than a large one kept until a full GC.
 */
export const CHUNK_BYTES = 48 * 1024;
/** Chunks read per query when streaming a blob out. */
const CHUNKS_PER_READ = 16;

/**
 * Blobs in the database, as rows of fixed-size chunks: every process of a deployment sees every file
 * without another service to run, and a blob streams in and out a chunk at a time.
 */
export class DatabaseBlobStore implements BlobStore {
  constructor(private readonly db: Db) {}

  async write(blobId: string, _botId: string, source: AsyncIterable<Uint8Array>): Promise<void> {
    // One chunk buffer, filled and written in turn: what an upload holds is one chunk, whatever its size.
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let filled = 0;
    let seq = 0;
    const flush = async () => {
      await this.db
        .insertInto('file_blob_chunks')
        .values({ blob_id: blobId, seq: seq++, data: chunk.subarray(0, filled) })
        .execute();
      filled = 0;
    };
    try {
      for await (const piece of source) {
        let offset = 0;
        while (offset < piece.byteLength) {
          const taken = Math.min(CHUNK_BYTES - filled, piece.byteLength - offset);
          chunk.set(piece.subarray(offset, offset + taken), filled);
          filled += taken;
          offset += taken;
          if (filled === CHUNK_BYTES) await flush();
        }
      }
      if (filled > 0) await flush();
    } catch (err) {
      await this.delete(blobId);
      throw err;
    }
  }

  read(blobId: string, _botId: string, range?: ByteRange): Readable {
    const db = this.db;
    async function* chunks(): AsyncGenerator<Buffer> {
      const first = range ? Math.floor(range.start / CHUNK_BYTES) : 0;
      const last = range ? Math.floor(range.end / CHUNK_BYTES) : Number.MAX_SAFE_INTEGER;
      for (let seq = first; seq <= last; seq += CHUNKS_PER_READ) {
        const rows = await db
          .selectFrom('file_blob_chunks')
          .select(['seq', 'data'])
          .where('blob_id', '=', blobId)
          .where('seq', '>=', seq)
          .where('seq', '<', Math.min(seq + CHUNKS_PER_READ, last + 1))
          .orderBy('seq')
          .execute();
        for (const row of rows) {
          const data = Buffer.from(row.data);
          const offset = row.seq * CHUNK_BYTES;
          const from = range ? Math.max(range.start - offset, 0) : 0;
          const to = range ? Math.min(range.end - offset + 1, data.length) : data.length;
          yield data.subarray(from, to);
        }
        if (rows.length < CHUNKS_PER_READ) return;
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  async delete(blobId: string): Promise<void> {
    await this.db.deleteFrom('file_blob_chunks').where('blob_id', '=', blobId).execute();
  }
}
