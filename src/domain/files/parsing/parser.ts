import { Worker } from 'node:worker_threads';
import { FROM_SOURCE } from '../../../paths.ts';
import type { PassageDraft } from '../passages.ts';
import { UnindexableDocument } from './formats.ts';
import type { ParseRequest } from './index.ts';

export interface ParseJob {
  id: number;
  request: ParseRequest;
}

export type ParseOutcome =
  { id: number; passages: PassageDraft[] } | { id: number; error: string; unindexable: boolean };

/**
 * The worker's module, this one's sibling: run from the sources, a worker thread does not inherit the
 * TypeScript loader, so a plain module registers it first; compiled, the worker's JavaScript itself.
 */
const WORKER_ENTRY = new URL(FROM_SOURCE ? './worker-entry.mjs' : './worker.js', import.meta.url);
/** A document that takes longer than this to parse is given up (its worker is replaced). */
export const PARSE_TIMEOUT_MS = 120_000;
/** The parser's heap: a hostile document that would take more fails alone, the server stays up. */
const WORKER_HEAP_MB = 1024;

/**
 * Parses documents in a worker thread, off the event loop that serves requests, within a heap limit
 * and a time limit. A document that crashes or hangs the parser fails with a reason (UnindexableDocument);
 * the next one gets a fresh worker.
 */
export class DocumentParser {
  private worker: Worker | undefined;
  private next = 1;
  private readonly pending = new Map<number, { resolve(p: PassageDraft[]): void; reject(e: Error): void }>();

  constructor(private readonly timeoutMs = PARSE_TIMEOUT_MS) {}

  async parse(request: ParseRequest): Promise<PassageDraft[]> {
    const worker = this.start();
    const id = this.next++;
    // The bytes move to the worker (a copy first: the buffer may be a slice of a pooled one).
    const data = new Uint8Array(request.data);
    return new Promise<PassageDraft[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new UnindexableDocument(`Parsing took longer than ${Math.round(this.timeoutMs / 1000)} s`));
        void this.stopWorker();
      }, this.timeoutMs);
      this.pending.set(id, {
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      worker.postMessage({ id, request: { ...request, data } } satisfies ParseJob, [data.buffer]);
    });
  }

  async close(): Promise<void> {
    await this.stopWorker();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_ENTRY, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    worker.unref();
    worker.on('message', (outcome: ParseOutcome) => {
      const waiter = this.pending.get(outcome.id);
      if (!waiter) return;
      this.pending.delete(outcome.id);
      if ('passages' in outcome) waiter.resolve(outcome.passages);
      else
        waiter.reject(
          outcome.unindexable ? new UnindexableDocument(outcome.error) : new Error(outcome.error),
        );
    });
    const fail = (reason: string) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.pending.values()) waiter.reject(new UnindexableDocument(reason));
      this.pending.clear();
    };
    worker.on('error', (err) => fail(`The parser failed on this document: ${err.message}`));
    worker.on('exit', (code) => fail(`The parser stopped on this document (exit code ${code})`));
    this.worker = worker;
    return worker;
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
