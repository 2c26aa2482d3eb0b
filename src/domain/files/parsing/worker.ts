import { parentPort } from 'node:worker_threads';
import { parseDocument, UnindexableDocument } from './index.ts';
import type { ParseJob, ParseOutcome } from './parser.ts';

/** The parser's worker thread: one document at a time, answered by id. */
parentPort?.on('message', (job: ParseJob) => {
  void parseDocument(job.request).then(
    (passages) => parentPort?.postMessage({ id: job.id, passages } satisfies ParseOutcome),
    (err: unknown) =>
      parentPort?.postMessage({
        id: job.id,
        error: err instanceof Error ? err.message : String(err),
        unindexable: err instanceof UnindexableDocument,
      } satisfies ParseOutcome),
  );
});
