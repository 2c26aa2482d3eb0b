import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { KnowledgeBaseDefinition } from '../package/format.ts';
import type { FilesApi, RemoteFile } from './files-api.ts';

/** The tags that put a file in a knowledge base (the hosted product's convention, see knowledge-bases.ts). */
export const knowledgeTags = (kbId: string, title: string) => ({ source: 'knowledge-base', kbId, title });

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * Makes the bot's knowledge bases hold the package's documents: creates the knowledge bases the
 * package declares, uploads the documents that are new or changed (by SHA-256) and indexes them,
 * deletes the files of documents the package no longer lists, then waits for the indexing. Answers
 * false when a document could not be indexed.
 */
export async function syncKnowledge(
  files: FilesApi,
  dir: string,
  knowledge: Record<string, KnowledgeBaseDefinition>,
): Promise<boolean> {
  let indexed = true;
  const existingBases = Object.keys(knowledge).length ? await files.knowledgeBases() : [];
  for (const [name, definition] of Object.entries(knowledge)) {
    const kb = existingBases.find((k) => k.name === name) ?? (await files.createKnowledgeBase(name));
    const stored = new Map((await files.list({ kbId: kb.id })).map((f) => [f.key, f]));
    const uploaded: RemoteFile[] = [];
    let unchanged = 0;
    const wanted = new Set<string>();
    for (const document of definition.files) {
      const key = `${name}/${document}`;
      wanted.add(key);
      const local = path.join(dir, document);
      const hash = await sha256(local);
      const current = stored.get(key);
      if (current?.metadata.sha256 === hash && current.status === 'indexing_completed') {
        unchanged++;
        continue;
      }
      uploaded.push(
        await files.upload(key, local, {
          index: true,
          tags: knowledgeTags(kb.id, path.basename(document)),
          metadata: { sha256: hash, path: document },
        }),
      );
    }
    const removed = [...stored.values()].filter((f) => !wanted.has(f.key));
    for (const file of removed) await files.delete(file.id);
    process.stdout.write(
      `Knowledge base ${name}: ${uploaded.length} uploaded, ${unchanged} unchanged, ${removed.length} removed\n`,
    );
    for (const file of uploaded) {
      const settled = await files.settled(file.id);
      if (settled.status !== 'indexing_completed') {
        indexed = false;
        process.stderr.write(
          `error: ${file.key} was not indexed (${settled.status}): ${settled.failedStatusReason}\n`,
        );
      }
    }
  }
  return indexed;
}
