import type { Store } from '../../store/index.ts';
import type { FileContents } from '../files/contents.ts';
import type { SemanticSearch } from '../embeddings/queue.ts';
import { RowVectors } from './row-vectors.ts';
import { TableJobs } from './jobs.ts';
import { TableSearch } from './search.ts';
import { TableQueries } from './find.ts';
import { TableRows } from './rows.ts';
import { Tables } from './tables.ts';

/** The Tables API's services, wired to one store. */
export interface TablesDomain {
  tables: Tables;
  tableRows: TableRows;
  tableQueries: TableQueries;
  tableJobs: TableJobs;
}

/**
 * Tables' imports and exports go through the Files API's files: `contents` reads and writes them; their
 * rows are searched by meaning with the files' embedding queue.
 */
export function createTablesDomain(
  store: Store,
  contents: FileContents,
  semantic: SemanticSearch,
): TablesDomain {
  const search = new TableSearch(
    store.sql.textSearch,
    new RowVectors(semantic.embedding, store.sql.vectorIndex, semantic.onFallback),
    semantic.ranking,
  );
  const tables = new Tables(store, search);
  const tableRows = new TableRows(store, tables, search);
  return {
    tables,
    tableRows,
    tableQueries: new TableQueries(store, tables, search),
    tableJobs: new TableJobs(store, tables, tableRows, contents),
  };
}
