// The retrieval scenario's steps against a running server: its corpus uploaded through the official
// client (the Files API, as a bot would), waited for until every passage is indexed and embedded, and
// its questions asked through searchFiles, each answer's rank and round trip kept.
import { performance } from 'node:perf_hooks';
import { Client } from '@botpress/client';
import { openStore, toCount } from '../../src/store/index.ts';
import type { StoreConfig } from '../../src/config.ts';
import type { ParleyData } from './parley.ts';
import { quality } from './retrieval-corpus.ts';
import type { Question } from './retrieval-corpus.ts';

/** The answers a question is judged on: recall@5 reads the first 5, MRR all 10. */
export const ANSWERS = 10;
export const RECALL_AT = 5;
/** Files uploaded at once. */
const UPLOADS_IN_FLIGHT = 4;

export function botClient(url: string, botId: string, token: string): Client {
  return new Client({ apiUrl: url, botId, token });
}

/** Uploads documents into the knowledge base (indexed), `UPLOADS_IN_FLIGHT` at a time. */
export async function upload(
  client: Client,
  kbId: string,
  documents: { key: string; content: string }[],
): Promise<void> {
  const queue = [...documents];
  const worker = async () => {
    for (let doc = queue.shift(); doc; doc = queue.shift()) {
      await client.uploadFile({
        key: doc.key,
        content: doc.content,
        index: true,
        tags: { source: 'knowledge-base', kbId },
      });
    }
  };
  await Promise.all(Array.from({ length: UPLOADS_IN_FLIGHT }, worker));
}

/** The server's database, opened beside it to tell how far indexing and embedding are. */
export function storeOf(data: ParleyData): StoreConfig {
  return data.databaseUrl === undefined
    ? { kind: 'sqlite', file: `${data.dataDir}/parley.db` }
    : { kind: 'postgres', url: data.databaseUrl, poolSize: 2, statementTimeoutMs: 60_000 };
}

/**
 * Waits until `passages` passages are indexed and each has a vector, and no embedding work waits; fails
 * past `timeoutMs`, saying how far it got.
 */
export async function untilEmbedded(
  data: ParleyData,
  passages: number,
  timeoutMs: number,
  progress: (text: string) => void,
): Promise<void> {
  const store = await openStore(storeOf(data));
  try {
    const until = Date.now() + timeoutMs;
    let said = 0;
    for (;;) {
      const count = async (table: 'file_passages' | 'passage_vectors' | 'embedding_jobs') =>
        toCount(
          (
            await store.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const [indexed, vectors, jobs] = [
        await count('file_passages'),
        await count('passage_vectors'),
        await count('embedding_jobs'),
      ];
      const state = `${indexed} of ${passages} passages indexed, ${vectors} embedded, ${jobs} embedding jobs left`;
      if (indexed >= passages && vectors >= indexed && jobs === 0) return;
      if (Date.now() > until) throw new Error(`not embedded within ${timeoutMs / 1000} s: ${state}`);
      if (Date.now() - said > 10_000) {
        progress(state);
        said = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await store.close();
  }
}

/** One search's answers, best first: each passage by its file's key and its position there. */
export type Answers = { key: string; paragraph: number }[];

export interface AskedSet {
  recall: number;
  mrr: number;
  /** Each question's answers, in the order asked. */
  answers: Answers[];
  /** Each search's round trip, in milliseconds. */
  timesMs: number[];
}

/** Asks each question of the knowledge base, one at a time: recall@RECALL_AT, MRR and the round trips. */
export async function ask(client: Client, kbId: string, questions: Question[]): Promise<AskedSet> {
  const answers: Answers[] = [];
  const timesMs: number[] = [];
  for (const q of questions) {
    const started = performance.now();
    const { passages } = await client.searchFiles({
      query: q.query,
      tags: { kbId },
      limit: ANSWERS,
      contextDepth: 0,
    });
    timesMs.push(performance.now() - started);
    answers.push(passages.map((p) => ({ key: p.file.key, paragraph: p.meta.position ?? -1 })));
  }
  return { ...quality(questions, answers, RECALL_AT), answers, timesMs };
}

/**
 * Recall@k of approximate answers against exact ones (the same questions, in the same order): of each
 * question's exact top k, the share the approximate top k holds, over all questions.
 */
export function recallOf(approximate: Answers[], exact: Answers[], k: number): number {
  let wanted = 0;
  let found = 0;
  exact.forEach((answers, i) => {
    const got = new Set((approximate[i] ?? []).slice(0, k).map((a) => `${a.key}:${a.paragraph}`));
    for (const a of answers.slice(0, k)) {
      wanted++;
      if (got.has(`${a.key}:${a.paragraph}`)) found++;
    }
  });
  return wanted === 0 ? 1 : found / wanted;
}
