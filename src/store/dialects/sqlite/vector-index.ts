import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { VectorIndex } from '../vector-index.ts';
import { EXACT_VECTORS } from '../../vectors/exact.ts';
import { signatureScan } from '../../vectors/signature-scan.ts';
import { VECTOR_BYTES } from '../../vectors/vector-column.ts';

/**
 * SQLite's vector index: the signature tables (migration 0030) scanned with sqlite-vec's Hamming distance
 * (`vec_distance_hamming`, in C), the nearest first. Measured at 100,000 passages of one bot (512-bit
 * signatures, a busy 2-core machine): 15 to 20 ms whatever the number of candidates, where sqlite-vec's
 * own `vec0` table of the same signatures took 23 ms for the nearest 100 and 110 ms for 500 (its k-nearest
 * search grows with k), and a `vec0` table of the float vectors themselves 155 ms (exact, every vector).
 * The signature tables are kept by triggers that need no extension, so a store opened without it
 * (another platform) keeps them too, and searches by the exact scan meanwhile.
 */
export function sqliteVectorIndex(vecLoaded: boolean): VectorIndex {
  if (!vecLoaded) return EXACT_VECTORS;
  // vec_bit gives the bytes the type the distance wants (a subquery or CTE would lose it).
  return signatureScan(
    'sqlite-vec',
    (column, signature) =>
      sql<number>`vec_distance_hamming(vec_bit(${column}), vec_bit(${Buffer.from(signature)}))`,
    VECTOR_BYTES,
  );
}

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
