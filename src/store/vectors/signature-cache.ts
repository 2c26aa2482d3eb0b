import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Executor } from '../executor.ts';
import type { VectorCandidate, VectorIndex, VectorRequest } from '../dialects/vector-index.ts';
import type { PassageType } from '../../value-sets.ts';
import { SIGNATURE_BITS } from './signature.ts';
import { withVectorBytes } from './vector-column.ts';
import type { VectorColumn } from './vector-column.ts';

/** The signatures a server keeps in memory at most (64 bytes each, and their passage's id: about 60 MB). */
export const CACHED_SIGNATURES = 500_000;

/**
 * The bytes of vectors a server keeps in memory at most, beside their signatures: 256 MiB hold 170,000
 * vectors of 384 dimensions, 43,000 of 1,536. Past it, the least recently searched files' vectors are
 * let go (their signatures kept), and their candidates read from the database again.
 */
export const CACHED_VECTOR_BYTES = 256 * 1024 * 1024;

/** 32-bit words of a signature (a multiple of 4: `nearest` counts four at a time). */
const WORDS = SIGNATURE_BITS / 32;

/**
 * One file's signatures of one model, as of `version`: the passages' ids, their types and their
 * signatures' words, and their vectors while the memory holds them (`dimension` floats each, in the order
 * of the ids; none when they differ in length).
 */
interface FileSignatures {
  version: string;
  ids: string[];
  types: PassageType[];
  words: Uint32Array;
  vectors?: { dimension: number; floats: Float32Array };
}

/** A candidate found by its signature: its file's copy, and its place in it. */
interface Nearest {
  file: FileSignatures;
  at: number;
}

/** What the copy's statements say differently on each store. */
export interface SignatureCacheDialect {
  /** A signature column's bytes (SIGNATURE_BITS / 8 of them). */
  signatureBytes: (column: RawBuilder<unknown>) => RawBuilder<Uint8Array>;
  /** Whether `column` is one of `values`, however many (as one parameter). */
  oneOf: (column: RawBuilder<unknown>, values: readonly string[]) => RawBuilder<SqlBool>;
  /**
   * Signatures (and their vectors) read in one statement at most, files whole: fewer where a statement
   * holds the server's thread until it ends (SQLite's).
   */
  readAtOnce: number;
}

/**
 * The vector index for files' passages on both stores: their signatures (vectors/signature.ts) scanned in the
 * server's memory, and the nearest ones' vectors taken from there too, each file's read once from
 * `passage_signatures` and `passage_vectors` and again only when its version
 * (`passage_signature_versions`, kept by triggers in the transaction of every write: migrations 0036 and 0042; a
 * vector is never rewritten, only added or removed) is not the one the copy was read at, whichever server
 * wrote it. Each search reads the versions of its files first, so it never ranks vectors older than its
 * own statement sees; a passage deleted after that statement may be a candidate, and is not answered
 * either: the search reads the passages of its hits afterwards (files/search.ts).
 *
 * Why not in the database: at 100,000 passages PostgreSQL's `bit_count(signature # query)` over every
 * signature takes 40 ms, the row by row work of the executor, and sqlite-vec's `vec_distance_hamming` 24
 * (two thirds of it the calls of its functions, in the server's one thread), where the same scan here
 * takes a few; and neither an index
 * of bands of the signatures (LSH) nor one of lists by nearest centroid (IVF) kept 0.95 of the exact top
 * 10 on the bench's corpus at a fraction of the rows (bench/results/2026-11-27-pg-retrieval.md). Why the
 * vectors too: reading the 500 candidates' vectors back took 7 ms more than their ids alone (at 384
 * dimensions, 1 MB of text to send, receive and decode), and their text and buffers made the engine
 * collect its whole heap every few dozen searches, the slowest of them. A search whose files hold more
 * than `capacity` signatures, and a table's rows, are scanned by `inDatabase`; the candidates of a file
 * whose vectors the memory does not hold (past `vectorBytes`) are read from the database.
 */
export function cachedSignatureScan<Selected>(
  inDatabase: VectorIndex,
  vectors: VectorColumn<Selected>,
  dialect: SignatureCacheDialect,
  { capacity = CACHED_SIGNATURES, vectorBytes = CACHED_VECTOR_BYTES } = {},
): VectorIndex {
  const { oneOf } = dialect;
  /** By file and model, least recently searched first. */
  const cached = new Map<string, FileSignatures>();
  let held = 0;
  let heldBytes = 0;
  const keyOf = (fileId: string, model: string) => `${model}\n${fileId}`;
  const dropVectors = (entry: FileSignatures) => {
    heldBytes -= entry.vectors?.floats.byteLength ?? 0;
    delete entry.vectors;
  };
  const forget = (key: string) => {
    const entry = cached.get(key);
    if (entry === undefined) return;
    held -= entry.ids.length;
    dropVectors(entry);
    cached.delete(key);
  };

  /** Reads these files' signatures, types and vectors (as of the same statement) into the copy. */
  async function read(db: Executor, model: string, fileIds: string[]): Promise<void> {
    const withVectors = vectorBytes > 0;
    // The signatures' bytes: their bit strings' binary form, after its 4-byte length.
    const { rows } = await sql<{
      file_id: string;
      version: string;
      passage_id: string;
      type: PassageType;
      signature: Uint8Array;
      vector?: Selected;
    }>`
      select s.file_id, v.version, s.passage_id, p.type,
        ${dialect.signatureBytes(sql.ref('s.signature'))} as signature
        ${withVectors ? sql`, ${vectors.select(sql.ref('pv.vector'))} as vector` : sql``}
      from passage_signatures s
        join passage_signature_versions v on v.file_id = s.file_id and v.model = s.model
        join file_passages p on p.id = s.passage_id
        ${withVectors ? sql`join passage_vectors pv on pv.passage_id = s.passage_id and pv.model = s.model` : sql``}
      where s.model = ${model} and ${oneOf(sql.ref('s.file_id'), fileIds)}`.execute(db);
    for (const fileId of fileIds) forget(keyOf(fileId, model));
    // Every row's, or none.
    const vectorBytesOf = vectors.bytes(
      rows.flatMap((row) => (row.vector === undefined ? [] : [row.vector])),
    );
    const byFile = new Map<
      string,
      { version: string; rows: ((typeof rows)[number] & { bytes?: Uint8Array })[] }
    >();
    rows.forEach((row, i) => {
      const file = byFile.get(row.file_id) ?? { version: String(row.version), rows: [] };
      byFile.set(row.file_id, file);
      file.rows.push({ ...row, bytes: vectorBytesOf[i] });
    });
    for (const [fileId, file] of byFile) {
      const words = new Uint32Array(file.rows.length * WORDS);
      file.rows.forEach((row, i) => wordsInto(row.signature, words, i * WORDS));
      const entry: FileSignatures = {
        version: file.version,
        ids: file.rows.map((row) => row.passage_id),
        types: file.rows.map((row) => row.type),
        words,
      };
      const length = file.rows[0]?.bytes?.byteLength ?? 0;
      if (length > 0 && length % 4 === 0 && file.rows.every((row) => row.bytes?.byteLength === length)) {
        const floats = new Float32Array((file.rows.length * length) / 4);
        const bytes = new Uint8Array(floats.buffer);
        file.rows.forEach((row, i) => bytes.set(row.bytes ?? [], i * length));
        entry.vectors = { dimension: length / 4, floats };
        heldBytes += floats.byteLength;
      }
      cached.set(keyOf(fileId, model), entry);
      held += entry.ids.length;
    }
  }

  /**
   * The reads under way, by file and model: a search that needs a file another search is reading waits
   * for that read rather than reading the same vectors again (after a start, every search at once would).
   */
  const reading = new Map<string, Promise<void>>();

  /** The files' signatures as of their versions (or newer), read where the copy is older. */
  async function signaturesOf(
    db: Executor,
    model: string,
    versions: { file_id: string; version: string; signatures: number }[],
  ): Promise<FileSignatures[]> {
    const isStale = (file: { file_id: string; version: string }) =>
      cached.get(keyOf(file.file_id, model))?.version !== String(file.version);
    // A read that began before this search's versions may be older: its files are checked again after.
    const underway = new Set(
      versions.filter(isStale).flatMap((file) => reading.get(keyOf(file.file_id, model)) ?? []),
    );
    await Promise.all([...underway].map((read) => read.catch(() => {})));
    const stale = versions.filter(isStale);
    // A few statements of whole files, rather than one that would hold every vector's text at once; each
    // file's read is known to other searches before the first statement runs.
    let reads = Promise.resolve();
    const ours: [string, Promise<void>][] = [];
    for (let from = 0; from < stale.length;) {
      let signatures = 0;
      let to = from;
      while (
        to < stale.length &&
        (to === from || signatures + (stale[to]?.signatures ?? 0) <= dialect.readAtOnce)
      )
        signatures += stale[to++]?.signatures ?? 0;
      const fileIds = stale.slice(from, to).map((file) => file.file_id);
      // Each after a turn of the event loop: where a statement holds the server's thread (SQLite's), the
      // requests that came meanwhile are answered between two.
      const done = reads.then(async () => {
        await nextTurn();
        await read(db, model, fileIds);
      });
      for (const fileId of fileIds) {
        ours.push([keyOf(fileId, model), done]);
        reading.set(keyOf(fileId, model), done);
      }
      reads = done;
      from = to;
    }
    try {
      await reads;
    } finally {
      for (const [key, done] of ours) if (reading.get(key) === done) reading.delete(key);
    }
    const found: FileSignatures[] = [];
    for (const { file_id: fileId } of versions) {
      const key = keyOf(fileId, model);
      const entry = cached.get(key);
      if (entry === undefined) continue;
      // Searched now: the last to be let go.
      cached.delete(key);
      cached.set(key, entry);
      found.push(entry);
    }
    for (const [key, entry] of cached) {
      if (held <= capacity && heldBytes <= vectorBytes) break;
      if (held > capacity) forget(key);
      else dropVectors(entry);
    }
    return found;
  }

  return {
    kind: 'signature-cache',
    candidates: async (db: Executor, request: VectorRequest): Promise<VectorCandidate[]> => {
      if (request.source === 'rows') return inDatabase.candidates(db, request);
      if (request.fileIds.length === 0) return [];
      // A file with none (SQLite keeps its version row, counted on) has nothing to read, at any version.
      const { rows: versionRows } = await sql<{ file_id: string; version: string; signatures: number }>`
        select file_id, version, signatures from passage_signature_versions
        where model = ${request.model} and ${oneOf(sql.ref('file_id'), request.fileIds)}
          and signatures > 0`.execute(db);
      const total = versionRows.reduce((sum, row) => sum + row.signatures, 0);
      if (total > capacity) return inDatabase.candidates(db, request);
      if (total === 0) return [];
      const files = await signaturesOf(db, request.model, versionRows);
      const excluded = new Set<PassageType | undefined>(request.excludedTypes);
      const inMemory: VectorCandidate[] = [];
      const elsewhere: string[] = [];
      for (const { file, at } of nearest(files, request.signature, request.limit)) {
        const id = file.ids[at] as string;
        if (file.vectors === undefined) elsewhere.push(id);
        else if (!excluded.has(file.types[at])) {
          const { dimension, floats } = file.vectors;
          const vector = new Uint8Array(floats.buffer, at * dimension * 4, dimension * 4);
          inMemory.push({ id, vector });
        }
      }
      if (elsewhere.length === 0) return inMemory;
      // Headings left out after the scan, as in the database (few of the nearest).
      const excludedHere =
        request.excludedTypes.length > 0
          ? sql`and not exists (select 1 from file_passages p where p.id = v.passage_id
              and ${oneOf(sql.ref('p.type'), request.excludedTypes)})`
          : sql``;
      const { rows } = await sql<{ id: string; vector: Selected }>`select v.passage_id as id,
          ${vectors.select(sql.ref('v.vector'))} as vector from passage_vectors v
        where v.model = ${request.model} and ${oneOf(sql.ref('v.passage_id'), elsewhere)} ${excludedHere}`.execute(
        db,
      );
      return [...inMemory, ...withVectorBytes(vectors, rows)];
    },
  };
}

/** The `limit` signatures nearest the query's (Hamming distance), in no particular order. */
function nearest(files: FileSignatures[], signature: Uint8Array, limit: number): Nearest[] {
  const query = new Uint32Array(WORDS);
  wordsInto(signature, query, 0);
  // Each signature's distance, and a count of each distance: the distance below which `limit` fit is
  // read from the counts (no sort of them all).
  const counts = new Uint32Array(SIGNATURE_BITS + 1);
  const distances = files.map((file) => {
    const n = file.ids.length;
    const own = new Uint16Array(n);
    const words = file.words;
    for (let i = 0, at = 0; i < n; i++, at += WORDS) {
      let distance = 0;
      // Four words' bit counts a byte at a time (at most 32 a byte), added up once: half the work of
      // counting each word to its end (measured: 4 ms against 9 for 100,000 signatures).
      for (let w = 0; w < WORDS; w += 4) {
        const bytes =
          byteCounts((words[at + w] as number) ^ (query[w] as number)) +
          byteCounts((words[at + w + 1] as number) ^ (query[w + 1] as number)) +
          byteCounts((words[at + w + 2] as number) ^ (query[w + 2] as number)) +
          byteCounts((words[at + w + 3] as number) ^ (query[w + 3] as number));
        distance += Math.imul(bytes, 0x01010101) >>> 24;
      }
      own[i] = distance;
      counts[distance] = (counts[distance] as number) + 1;
    }
    return own;
  });
  let threshold = 0;
  let below = 0;
  while (threshold <= SIGNATURE_BITS && below + (counts[threshold] as number) < limit) {
    below += counts[threshold] as number;
    threshold++;
  }
  let atThreshold = limit - below;
  const found: Nearest[] = [];
  files.forEach((file, f) => {
    const own = distances[f] as Uint16Array;
    for (let at = 0; at < own.length; at++) {
      const d = own[at] as number;
      if (d < threshold || (d === threshold && atThreshold-- > 0)) found.push({ file, at });
    }
  });
  return found;
}

/** A signature's bytes as 32-bit words (big-endian: any order does, the same for every signature). */
function wordsInto(bytes: Uint8Array, words: Uint32Array, at: number): void {
  for (let w = 0; w < WORDS; w++) {
    const b = w * 4;
    words[at + w] =
      (((bytes[b] as number) << 24) |
        ((bytes[b + 1] as number) << 16) |
        ((bytes[b + 2] as number) << 8) |
        (bytes[b + 3] as number)) >>>
      0;
  }
}

/** The number of bits set in each byte of a 32-bit word, in that byte. */
function byteCounts(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (v + (v >>> 4)) & 0x0f0f0f0f;
}
