import { sql } from 'kysely';
import type { VectorIndex } from '../vector-index.ts';
import { SIGNATURE_BITS } from '../../vectors/signature.ts';
import { signatureScan } from '../../vectors/signature-scan.ts';
import { cachedSignatureScan } from '../../vectors/signature-cache.ts';
import type { SignatureCacheDialect } from '../../vectors/signature-cache.ts';
import { VECTOR_BASE64 } from '../../vectors/vector-column.ts';
import { oneOf } from './one-of.ts';

/**
 * PostgreSQL's vector index without an extension: the signature tables (migration 0030, the signatures
 * as `bit(SIGNATURE_BITS)`) scanned with `bit_count(signature # query)`, the nearest first.
 */
export const POSTGRES_SIGNATURE_SCAN: VectorIndex = signatureScan(
  'signature-scan',
  // The query's as a bit string once (a subquery of no row: an InitPlan), in hex, most significant bit
  // first: the bit order the trigger writes the stored ones in.
  (column, signature) =>
    sql<number>`bit_count(${column} # (select ('x' || ${Buffer.from(signature).toString('hex')})::bit(${sql.lit(SIGNATURE_BITS)})))`,
  VECTOR_BASE64,
);

/**
 * PostgreSQL's vector index: files' passages by their signatures and vectors in the server's memory
 * (`vectorBytes` of vectors at most), checked against the versions the database keeps
 * (vectors/signature-cache.ts); a table's rows, and searches of more signatures than the memory holds, by
 * the scan in the database.
 */
export function postgresVectorIndex(vectorBytes?: number): VectorIndex {
  return cachedSignatureScan(POSTGRES_SIGNATURE_SCAN, VECTOR_BASE64, POSTGRES_CACHE_DIALECT, {
    ...(vectorBytes !== undefined && { vectorBytes }),
  });
}

const POSTGRES_CACHE_DIALECT: SignatureCacheDialect = {
  // A bit string's binary form: its 4-byte length, then its bytes.
  signatureBytes: (column) => sql<Uint8Array>`substring(varbit_send(${column}) from 5)`,
  oneOf,
  // Another connection reads them while the server goes on: fewer statements, each a round trip.
  readAtOnce: 20_000,
};
