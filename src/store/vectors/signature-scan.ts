import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Executor } from '../executor.ts';
import type {
  VectorCandidate,
  VectorIndex,
  VectorIndexKind,
  VectorRequest,
} from '../dialects/vector-index.ts';
import { withVectorBytes } from './vector-column.ts';
import type { VectorColumn } from './vector-column.ts';

/**
 * A vector index of signatures (vectors/signature.ts) in narrow tables of their own, one row per vector
 * with its search's keys (`passage_signatures`: the file and model; `row_signatures`: the table and
 * model), added by a trigger on the vector's insert and removed with it by the foreign key's cascade
 * (migration 0030): a file, a knowledge base, rows or a table deleted take theirs in their transaction.
 * A search scans the signatures of its own files (or table) by Hamming distance to the query's, the
 * database's way (`distance`), and reads back the nearest `limit` vectors, which the domain ranks
 * exactly. Narrow tables, since the scan reads every row of the search's files: over the vectors' table
 * itself (1.5 KB a vector at 384 dimensions) Postgres took twice as long.
 */
export function signatureScan<Selected>(
  kind: VectorIndexKind,
  /** The Hamming distance between a stored signature (a column) and the query's. */
  distance: (column: RawBuilder<unknown>, query: Uint8Array) => RawBuilder<number>,
  vectors: VectorColumn<Selected>,
): VectorIndex {
  return {
    kind,
    candidates: async (db: Executor, request: VectorRequest): Promise<VectorCandidate[]> => {
      const order = distance(sql.ref('s.signature'), request.signature);
      if (request.source === 'rows') {
        const { rows } = await sql<{ row_id: number; vector: Selected }>`with nearest as (
            select s.row_id from row_signatures s
            where s.table_id = ${request.tableId} and s.model = ${request.model}
            order by ${order} limit ${request.limit}
          )
          select v.row_id, ${vectors.select(sql.ref('v.vector'))} as vector
          from row_vectors v join nearest n on n.row_id = v.row_id
          where v.table_id = ${request.tableId} and v.model = ${request.model}`.execute(db);
        return withVectorBytes(vectors, rows).map((r) => ({ id: String(r.row_id), vector: r.vector }));
      }
      if (request.fileIds.length === 0) return [];
      // Headings left out after the scan (few of the nearest: the others are fewer candidates, not wrong).
      const excluded =
        request.excludedTypes.length > 0
          ? sql`and not exists (select 1 from file_passages p where p.id = v.passage_id
              and p.type in (${sql.join(request.excludedTypes)}))`
          : sql``;
      const { rows } = await sql<{ id: string; vector: Selected }>`with nearest as (
          select s.passage_id from passage_signatures s
          where s.file_id in (${sql.join(request.fileIds)}) and s.model = ${request.model}
          order by ${order} limit ${request.limit}
        )
        select v.passage_id as id, ${vectors.select(sql.ref('v.vector'))} as vector
        from passage_vectors v join nearest n on n.passage_id = v.passage_id
        where v.model = ${request.model} ${excluded}`.execute(db);
      return withVectorBytes(vectors, rows);
    },
  };
}
