import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { fromBase64s } from './bytes.ts';

/**
 * How a store's driver hands stored vectors back: what a query selects for the vector column, and the
 * bytes of the values it read. SQLite's driver gives the bytes themselves; node-postgres would give
 * `bytea` as hex text, each value decoded into a buffer of its own, so PostgreSQL's queries select the
 * vectors as base64 text, which a search of hundreds of vectors decodes at once (`fromBase64s`).
 */
export interface VectorColumn<Selected> {
  select(column: RawBuilder<unknown>): RawBuilder<Selected>;
  bytes(values: readonly Selected[]): Uint8Array[];
}

export const VECTOR_BYTES: VectorColumn<Uint8Array> = {
  select: (column) => sql<Uint8Array>`${column}`,
  bytes: (values) => [...values],
};

export const VECTOR_BASE64: VectorColumn<string> = {
  select: (column) => sql<string>`encode(${column}, 'base64')`,
  bytes: fromBase64s,
};

/** Rows whose `vector` was selected by `column`, with its bytes instead. */
export function withVectorBytes<Selected, Row extends { vector: Selected }>(
  column: VectorColumn<Selected>,
  rows: readonly Row[],
): (Omit<Row, 'vector'> & { vector: Uint8Array })[] {
  const bytes = column.bytes(rows.map((row) => row.vector));
  return rows.map((row, i) => ({ ...row, vector: bytes[i] ?? new Uint8Array() }));
}
