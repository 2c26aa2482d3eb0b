import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { HEADERS } from '../contract/headers.ts';
import { APIS } from '../contract/apis.ts';
import { collect } from '../contract/client.ts';
import type { Client, InputOf, OutputOf } from '../contract/client.ts';
import { PAGE_SIZE_MAX } from '../domain/shared/page-size.ts';
import { apiClient } from './api.ts';
import type { TablesClient } from './tables-api.ts';
import { CliError } from './errors.ts';

type FilesOps = typeof APIS.files.operations;

/** A file as the Files API answers it. */
export type RemoteFile = OutputOf<FilesOps, 'getFile'>['file'];
/** What the CLI reads of a knowledge base: what creating one answers (a listed one has more). */
export type RemoteKnowledgeBase = OutputOf<FilesOps, 'createKnowledgeBase'>['knowledgeBase'];
export type SearchResult = OutputOf<FilesOps, 'searchFiles'>['passages'][number];

/** What an upload may say of its file besides its key and size. */
export type UploadOptions = Pick<
  InputOf<FilesOps, 'upsertFile'>,
  'index' | 'tags' | 'metadata' | 'contentType'
>;

const END_STATES = ['upload_completed', 'upload_failed', 'indexing_completed', 'indexing_failed'];

/** The Files API as one bot, for `parley files`, `parley kb` and the knowledge bases of `parley deploy`. */
export class FilesApi {
  readonly files: Client<FilesOps>;
  /** The Tables API as the same bot (`parley tables`, the tables of `parley deploy`). */
  readonly tables: TablesClient;

  constructor(url: string, token: string, botId: string) {
    const asBot = { [HEADERS.authorization]: `Bearer ${token}`, [HEADERS.botId]: botId };
    this.files = apiClient(url, APIS.files, asBot);
    this.tables = apiClient(url, APIS.tables, asBot);
  }

  /** Upserts a file and PUTs the content of a local file to its upload URL, streamed. */
  async upload(key: string, path: string, options: UploadOptions = {}): Promise<RemoteFile> {
    const { size } = await stat(path).catch(() => {
      throw new CliError(`${path}: no such file`);
    });
    const { file } = await this.files.upsertFile({ key, size, ...options });
    let response: Response;
    try {
      // A stream body needs `duplex: 'half'`, which Node's RequestInit type does not list yet.
      const init: RequestInit & { duplex: 'half' } = {
        method: 'PUT',
        headers: { 'content-type': file.contentType, 'content-length': String(size) },
        body: Readable.toWeb(createReadStream(path)),
        duplex: 'half',
      };
      response = await fetch(file.uploadUrl, init);
    } catch (err) {
      throw new CliError(`uploading ${path} failed: ${(err as Error).message}`);
    }
    if (!response.ok)
      throw new CliError(`uploading ${path} failed: HTTP ${response.status} ${await response.text()}`);
    return file;
  }

  async get(idOrKey: string): Promise<RemoteFile> {
    return (await this.files.getFile({ id: idOrKey })).file;
  }

  async delete(idOrKey: string): Promise<void> {
    await this.files.deleteFile({ id: idOrKey });
  }

  /** Every file (all pages) that carries these tags. */
  async list(tags: Record<string, string> = {}): Promise<RemoteFile[]> {
    return (await collect(this.files.listFiles, 'files', { tags, pageSize: PAGE_SIZE_MAX })).items;
  }

  /** Waits until a file's upload and indexing are over; answers it as it ended. */
  async settled(idOrKey: string, timeoutMs = 120_000): Promise<RemoteFile> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const file = await this.get(idOrKey);
      if (END_STATES.includes(file.status)) return file;
      if (Date.now() > deadline)
        throw new CliError(`${file.key} is still ${file.status} after ${timeoutMs / 1000} s`);
      await sleep(200);
    }
  }

  async knowledgeBases(): Promise<RemoteKnowledgeBase[]> {
    const all = await collect(this.files.listKnowledgeBases, 'knowledgeBases', { pageSize: PAGE_SIZE_MAX });
    return all.items;
  }

  /** A knowledge base by id or name (the oldest of that name). */
  async knowledgeBase(idOrName: string): Promise<RemoteKnowledgeBase | undefined> {
    const all = await this.knowledgeBases();
    return all.find((k) => k.id === idOrName) ?? all.reverse().find((k) => k.name === idOrName);
  }

  async createKnowledgeBase(name: string): Promise<RemoteKnowledgeBase> {
    return (await this.files.createKnowledgeBase({ name })).knowledgeBase;
  }

  async search(query: string, tags: Record<string, string>, limit: number): Promise<SearchResult[]> {
    return (await this.files.searchFiles({ query, tags, limit, contextDepth: 0 })).passages;
  }
}
