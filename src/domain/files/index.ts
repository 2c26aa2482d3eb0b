import path from 'node:path';
import type { Store } from '../../store/index.ts';
import type { Links } from '../bots/links.ts';
import type { Settings } from '../shared/settings.ts';
import { DatabaseBlobStore, FolderBlobStore } from './blob-store.ts';
import type { BlobStore } from './blob-store.ts';
import { FileContents } from './contents.ts';
import { Files } from './files.ts';
import type { FilesLimits } from './files.ts';
import { IndexingQueue } from './indexing.ts';
import { KnowledgeBases } from './knowledge-bases.ts';
import { PassageStore } from './passages.ts';
import { DocumentParser } from './parsing/parser.ts';
import { FileSearch } from './search.ts';
import { UrlSigner } from './signing.ts';
import { EmbeddingQueue } from '../embeddings/queue.ts';
import type { SemanticSearch } from '../embeddings/queue.ts';
import { NO_EMBEDDER } from '../embeddings/vectors.ts';
import { passageVectors } from './passage-vectors.ts';

export interface FilesOptions extends FilesLimits {
  /** The data folder: where one process alone uses the store, contents live in its `files/` folder. */
  dataDir: string;
}

const MB = 1024 * 1024;
/** The defaults of the settings (src/config.ts), for a domain made without them (the CLI's). */
export const DEFAULT_FILES_OPTIONS: FilesOptions = {
  dataDir: './data',
  maxFileBytes: 100 * MB,
  botStorageBytes: 10 * 1024 * MB,
};

/** The Files API's services, wired to one store. */
export interface FilesDomain {
  files: Files;
  fileContents: FileContents;
  fileSearch: FileSearch;
  knowledgeBases: KnowledgeBases;
  indexing: IndexingQueue;
  /** Stops the parser's worker thread. */
  closeFiles(): Promise<void>;
}

/**
 * Contents go to the data folder where one process alone uses the store (the embedded one: that process
 * owns the folder). Where processes share it, every process must see every file, so they go to the
 * database itself, in chunks: no other service to run, and one backup.
 */
export function createFilesDomain(
  store: Store,
  settings: Settings,
  links: Links,
  options: FilesOptions,
  semantic: SemanticSearch = {
    embedding: new EmbeddingQueue(store, NO_EMBEDDER),
    onFallback: () => undefined,
    ranking: 'hybrid',
  },
): FilesDomain {
  const { embedding } = semantic;
  embedding.register('file', passageVectors);
  const blobs: BlobStore = store.sql.oneProcess
    ? new FolderBlobStore(path.join(path.resolve(options.dataDir), 'files'))
    : new DatabaseBlobStore(store.db);
  const engine = store.sql.textSearch;
  const passages = new PassageStore(store, engine, {
    queue: async (trx, fileId) => {
      const file = await trx.selectFrom('files').select('bot_id').where('id', '=', fileId).executeTakeFirst();
      if (file) await embedding.queue(trx, 'file', fileId, file.bot_id);
    },
  });
  const signer = new UrlSigner(settings);
  const files = new Files(store, passages, blobs, signer, links, options);
  const parser = new DocumentParser();
  return {
    files,
    fileContents: new FileContents(store, files, blobs, signer),
    fileSearch: new FileSearch(store, engine, passages, semantic),
    knowledgeBases: new KnowledgeBases(store, files),
    indexing: new IndexingQueue(store, passages, blobs, parser, embedding),
    closeFiles: () => parser.close(),
  };
}
