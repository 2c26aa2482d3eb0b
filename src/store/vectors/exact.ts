import type { Executor } from '../executor.ts';
import type { VectorCandidate, VectorIndex, VectorRequest } from '../dialects/vector-index.ts';

/** No index: every vector of the request is a candidate (the search ranks them all, exactly). */
export const EXACT_VECTORS: VectorIndex = {
  kind: 'exact',
  candidates: (db, request) => everyVector(db, request),
};

/** Every stored vector of the request (of a dimension: a row with nothing to embed has none). */
async function everyVector(db: Executor, request: VectorRequest): Promise<VectorCandidate[]> {
  if (request.source === 'rows') {
    const rows = await db
      .selectFrom('row_vectors')
      .select(['row_id', 'vector'])
      .where('table_id', '=', request.tableId)
      .where('model', '=', request.model)
      .where('dimension', '>', 0)
      .execute();
    return rows.map((r) => ({ id: String(r.row_id), vector: r.vector }));
  }
  if (request.fileIds.length === 0) return [];
  let query = db
    .selectFrom('passage_vectors')
    .select(['passage_vectors.passage_id as id', 'passage_vectors.vector'])
    .where('passage_vectors.file_id', 'in', request.fileIds)
    .where('passage_vectors.model', '=', request.model);
  if (request.excludedTypes.length > 0) {
    query = query
      .innerJoin('file_passages', 'file_passages.id', 'passage_vectors.passage_id')
      .where('file_passages.type', 'not in', request.excludedTypes);
  }
  return query.execute();
}
