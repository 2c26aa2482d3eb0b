import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { VectorIndex } from '../vector-index.ts';
import { EXACT_VECTORS } from '../../vectors/exact.ts';
import { signatureScan } from '../../vectors/signature-scan.ts';
import { cachedSignatureScan } from '../../vectors/signature-cache.ts';
import type { SignatureCacheDialect } from '../../vectors/signature-cache.ts';
import { VECTOR_BYTES } from '../../vectors/vector-column.ts';
import { oneOf } from './one-of.ts';

/**
 * SQLite's vector index: files' passages by their signatures and vectors in the server's memory
 * (`vectorBytes` of vectors at most), checked against the versions the database keeps (migration 0042,
 * vectors/signature-cache.ts); a table's rows, and searches of more signatures than the memory holds, by
 * the signature tables (migration 0030) scanned with sqlite-vec's Hamming distance
 * (`vec_distance_hamming`, in C), the nearest first: 15 to 24 ms at 100,000 signatures whatever the
 * number of candidates, where sqlite-vec's own `vec0` table of the same signatures took 23 ms for the
 * nearest 100 and 110 ms for 500 (its k-nearest search grows with k), and a `vec0` table of the float
 * vectors themselves 155 ms (exact, every vector). The signature tables and versions are kept by
 * triggers that need no extension, so a store opened without it (another platform) keeps them too, and
 * searches by the exact scan meanwhile.
 */
export function sqliteVectorIndex(vecLoaded: boolean, vectorBytes?: number): VectorIndex {
  if (!vecLoaded) return EXACT_VECTORS;
  // vec_bit gives the bytes the type the distance wants (a subquery or CTE would lose it).
  const inDatabase = signatureScan(
    'sqlite-vec',
    (column, signature) =>
      sql<number>`vec_distance_hamming(vec_bit(${column}), vec_bit(${Buffer.from(signature)}))`,
    VECTOR_BYTES,
  );
  return cachedSignatureScan(inDatabase, VECTOR_BYTES, SQLITE_CACHE_DIALECT, {
    ...(vectorBytes !== undefined && { vectorBytes }),
  });
}

const SQLITE_CACHE_DIALECT: SignatureCacheDialect = {
  signatureBytes: (column) => sql<Uint8Array>`${column}`,
  oneOf,
  // The statement holds the server's one thread: 20,000 of 384 dimensions held it for about half a second
  // (a first search of 100,000 passages read them in 2.9 s), 2,000 for about a twentieth.
  readAtOnce: 2_000,
};

/**
 * Loads sqlite-vec (`extension`, its loadable file) into the store's connection; false where it cannot
 * (`notice` says why), the store then searching by the exact scan.
 */
export function loadSqliteVec(
  database: SqliteDatabase.Database,
  extension: string,
  notice: (message: string) => void,
): boolean {
  try {
    database.loadExtension(extension);
    return true;
  } catch (err) {
    notice(
      `sqlite-vec could not load (${err instanceof Error ? err.message : String(err)}): searches by meaning scan every vector exactly`,
    );
    return false;
  }
}
