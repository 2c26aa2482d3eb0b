import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { HEADERS } from '../contract/headers.ts';
import { ApiClient } from './api.ts';
import { CliError } from './errors.ts';

/** The fields of a file the CLI uses (the Files API's File). */
export interface RemoteFile {
  id: string;
  key: string;
  size: number | null;
  contentType: string;
  status: string;
  failedStatusReason?: string;
  tags: Record<string, string>;
  metadata: Record<string, unknown>;
  url: string;
}

export interface RemoteKnowledgeBase {
  id: string;
  name: string;
}

export interface SearchResult {
  content: string;
  score: number;
  meta: { pageNumber?: number; subtype?: string };
  file: { id: string; key: string; tags: Record<string, string> };
}

export interface UploadOptions {
  index?: boolean;
  tags?: Record<string, string>;
  metadata?: Record<string, unknown>;
  contentType?: string;
}

/** `{ k: v }` as the Files API's query strings carry tag filters: `tags.k=v`. */
function tagQuery(tags: Record<string, string>): string[] {
  return Object.entries(tags).map(([k, v]) => `tags.${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
}

const END_STATES = ['upload_completed', 'upload_failed', 'indexing_completed', 'indexing_failed'];

/** The Files API as one bot, for `parley files`, `parley kb` and the knowledge bases of `parley deploy`. */
export class FilesApi {
  /** Requests as the bot (`parley tables` calls the Tables API with it too). */
  readonly api: ApiClient;

  constructor(url: string, token: string, botId: string) {
    this.api = new ApiClient(url, { [HEADERS.authorization]: `Bearer ${token}`, [HEADERS.botId]: botId });
  }

  /** Upserts a file and PUTs the content of a local file to its upload URL, streamed. */
  async upload(key: string, path: string, options: UploadOptions = {}): Promise<RemoteFile> {
    const { size } = await stat(path).catch(() => {
      throw new CliError(`${path}: no such file`);
    });
    const { file } = await this.api.request<{ file: RemoteFile & { uploadUrl: string } }>(
      'PUT',
      '/v1/files',
      {
        key,
        size,
        ...options,
      },
    );
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
    return (await this.api.request<{ file: RemoteFile }>('GET', `/v1/files/${encodeURIComponent(idOrKey)}`))
      .file;
  }

  async delete(idOrKey: string): Promise<void> {
    await this.api.request('DELETE', `/v1/files/${encodeURIComponent(idOrKey)}`);
  }

  /** Every file (all pages) that carries these tags. */
  async list(tags: Record<string, string> = {}): Promise<RemoteFile[]> {
    const files: RemoteFile[] = [];
    let nextToken: string | undefined;
    do {
      const query = [
        ...tagQuery(tags),
        'pageSize=100',
        ...(nextToken ? [`nextToken=${encodeURIComponent(nextToken)}`] : []),
      ];
      const page = await this.api.request<{ files: RemoteFile[]; meta: { nextToken?: string } }>(
        'GET',
        `/v1/files?${query.join('&')}`,
      );
      files.push(...page.files);
      nextToken = page.meta.nextToken;
    } while (nextToken);
    return files;
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
    const all: RemoteKnowledgeBase[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.api.request<{
        knowledgeBases: RemoteKnowledgeBase[];
        meta: { nextToken?: string };
      }>(
        'GET',
        `/v1/files/knowledge-bases?pageSize=100${nextToken ? `&nextToken=${encodeURIComponent(nextToken)}` : ''}`,
      );
      all.push(...page.knowledgeBases);
      nextToken = page.meta.nextToken;
    } while (nextToken);
    return all;
  }

  /** A knowledge base by id or name (the oldest of that name). */
  async knowledgeBase(idOrName: string): Promise<RemoteKnowledgeBase | undefined> {
    const all = await this.knowledgeBases();
    return all.find((k) => k.id === idOrName) ?? all.reverse().find((k) => k.name === idOrName);
  }

  async createKnowledgeBase(name: string): Promise<RemoteKnowledgeBase> {
    return (
      await this.api.request<{ knowledgeBase: RemoteKnowledgeBase }>('POST', '/v1/files/knowledge-bases', {
        name,
      })
    ).knowledgeBase;
  }

  async search(query: string, tags: Record<string, string>, limit: number): Promise<SearchResult[]> {
    const params = [
      `query=${encodeURIComponent(query)}`,
      ...tagQuery(tags),
      `limit=${limit}`,
      'contextDepth=0',
    ];
    return (
      await this.api.request<{ passages: SearchResult[] }>('GET', `/v1/files/search?${params.join('&')}`)
    ).passages;
  }
}
