import { sql } from 'kysely';
import type { Executor } from '../executor.ts';
import type { VectorCandidate, VectorIndex, VectorRequest } from '../dialects/vector-index.ts';
import { SIGNATURE_BITS } from './signature.ts';
import { withVectorBytes } from './vector-column.ts';
import type { VectorColumn } from './vector-column.ts';

/** The signatures a server keeps in memory at most (64 bytes each, and their passage's id: about 60 MB). */
export const CACHED_SIGNATURES = 500_000;

/** 32-bit words of a signature. */
const WORDS = SIGNATURE_BITS / 32;

/** One file's signatures of one model, as of `version`: the passages' ids and their signatures' words. */
interface FileSignatures {
  version: string;
  ids: string[];
  words: Uint32Array;
}

/**
 * PostgreSQL's vector index for files' passages: their signatures (vectors/signature.ts) scanned in the
 * server's memory, each file's read once from `passage_signatures` and again only when its version
 * (`passage_signature_versions`, kept by triggers in the transaction of every write: migration 0036)
 * is not the one the copy was read at, whichever server wrote it. Each search reads the versions of its
 * files first, so it never ranks signatures older than its own statement sees; a passage whose signature
 * the copy still holds, deleted since, is not answered either (its vector is read with the candidates).
 *
 * Why not in the database: at 100,000 passages `bit_count(signature # query)` over every signature takes
 * 40 ms, the row by row work of the executor, where the same scan here takes a few; and neither an index
 * of bands of the signatures (LSH) nor one of lists by nearest centroid (IVF) kept 0.95 of the exact top
 * 10 on the bench's corpus at a fraction of the rows (bench/results/2026-11-27-pg-retrieval.md). A search
 * whose files hold more than `capacity` signatures, and a table's rows, are scanned by `inDatabase`.
 */
export function cachedSignatureScan<Selected>(
  inDatabase: VectorIndex,
  vectors: VectorColumn<Selected>,
  capacity = CACHED_SIGNATURES,
): VectorIndex {
  /** By file and model, least recently searched first. */
  const cached = new Map<string, FileSignatures>();
  let held = 0;
  const keyOf = (fileId: string, model: string) => `${model}\n${fileId}`;
  const forget = (key: string) => {
    const entry = cached.get(key);
    if (entry === undefined) return;
    held -= entry.ids.length;
    cached.delete(key);
  };

  /** The files' signatures as of their versions (or newer), read where the copy is older. */
  async function signaturesOf(
    db: Executor,
    model: string,
    versions: Map<string, string>,
  ): Promise<FileSignatures[]> {
    const stale = [...versions].filter(
      ([fileId, version]) => cached.get(keyOf(fileId, model))?.version !== version,
    );
    if (stale.length > 0) {
      // The bytes of the bit strings (their binary form, after its 4-byte length), with each file's
      // version as of the same statement: a copy is never labelled newer than what it holds.
      const { rows } = await sql<{
        file_id: string;
        version: string;
        passage_id: string;
        signature: Uint8Array;
      }>`
        select s.file_id, v.version, s.passage_id, substring(varbit_send(s.signature) from 5) as signature
        from passage_signatures s join passage_signature_versions v on v.file_id = s.file_id and v.model = s.model
        where s.model = ${model} and s.file_id = any(${stale.map(([fileId]) => fileId)})`.execute(db);
      for (const [fileId] of stale) forget(keyOf(fileId, model));
      const read = new Map<string, { version: string; ids: string[]; signatures: Uint8Array[] }>();
      for (const row of rows) {
        const file = read.get(row.file_id) ?? { version: String(row.version), ids: [], signatures: [] };
        read.set(row.file_id, file);
        file.ids.push(row.passage_id);
        file.signatures.push(row.signature);
      }
      for (const [fileId, { version, ids, signatures }] of read) {
        const words = new Uint32Array(ids.length * WORDS);
        signatures.forEach((signature, i) => wordsInto(signature, words, i * WORDS));
        cached.set(keyOf(fileId, model), { version, ids, words });
        held += ids.length;
      }
    }
    const found: FileSignatures[] = [];
    for (const fileId of versions.keys()) {
      const key = keyOf(fileId, model);
      const entry = cached.get(key);
      if (entry === undefined) continue;
      // Searched now: the last to be evicted.
      cached.delete(key);
      cached.set(key, entry);
      found.push(entry);
    }
    for (const key of cached.keys()) {
      if (held <= capacity) break;
      forget(key);
    }
    return found;
  }

  return {
    kind: 'signature-cache',
    candidates: async (db: Executor, request: VectorRequest): Promise<VectorCandidate[]> => {
      if (request.source === 'rows') return inDatabase.candidates(db, request);
      if (request.fileIds.length === 0) return [];
      const { rows: versionRows } = await sql<{ file_id: string; version: string; signatures: number }>`
        select file_id, version, signatures from passage_signature_versions
        where model = ${request.model} and file_id = any(${request.fileIds})`.execute(db);
      const total = versionRows.reduce((sum, row) => sum + row.signatures, 0);
      if (total > capacity) return inDatabase.candidates(db, request);
      if (total === 0) return [];
      const files = await signaturesOf(
        db,
        request.model,
        new Map(versionRows.map((row) => [row.file_id, String(row.version)])),
      );
      const ids = nearest(files, request.signature, request.limit);
      if (ids.length === 0) return [];
      // Headings left out after the scan, as in the database (few of the nearest).
      const excluded =
        request.excludedTypes.length > 0
          ? sql`and not exists (select 1 from file_passages p where p.id = v.passage_id
              and p.type = any(${request.excludedTypes}))`
          : sql``;
      const { rows } = await sql<{ id: string; vector: Selected }>`select v.passage_id as id,
          ${vectors.select(sql.ref('v.vector'))} as vector from passage_vectors v
        where v.model = ${request.model} and v.passage_id = any(${ids}) ${excluded}`.execute(db);
      return withVectorBytes(vectors, rows);
    },
  };
}

/** The ids of the `limit` signatures nearest the query's (Hamming distance), in no particular order. */
function nearest(files: FileSignatures[], signature: Uint8Array, limit: number): string[] {
  const query = new Uint32Array(WORDS);
  wordsInto(signature, query, 0);
  const distances = files.map((file) => {
    const n = file.ids.length;
    const own = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      let distance = 0;
      for (let w = 0; w < WORDS; w++)
        distance += popcount(((file.words[i * WORDS + w] as number) ^ (query[w] as number)) >>> 0);
      own[i] = distance;
    }
    return own;
  });
  // The distance below which `limit` fit (a count of each distance: no sort of them all).
  const counts = new Uint32Array(SIGNATURE_BITS + 1);
  for (const own of distances) for (const d of own) counts[d] = (counts[d] as number) + 1;
  let threshold = 0;
  let below = 0;
  while (threshold <= SIGNATURE_BITS && below + (counts[threshold] as number) < limit) {
    below += counts[threshold] as number;
    threshold++;
  }
  let atThreshold = limit - below;
  const ids: string[] = [];
  files.forEach((file, f) => {
    const own = distances[f] as Uint16Array;
    for (let i = 0; i < own.length; i++) {
      const d = own[i] as number;
      if (d < threshold || (d === threshold && atThreshold-- > 0)) ids.push(file.ids[i] as string);
    }
  });
  return ids;
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

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
