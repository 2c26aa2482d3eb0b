/**
 * Moves SQLite's WAL checkpoints off the event loop. SQLite checkpoints in the connection whose commit
 * crosses `wal_autocheckpoint` pages: on Parley's one connection that is a request's commit, which then
 * copies the log into the database and syncs it to disk. A profile of the chat round trip showed those
 * checkpoints, every few dozen messages, as a large part of what a commit costs. Here a worker thread
 * with its own connection checkpoints every CHECKPOINT_INTERVAL_MS instead (PASSIVE: it never waits for
 * the writer, nor makes it wait), and the writer's own checkpoint stays, much further out, as a backstop
 * should the worker fall behind or die.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_INTERVAL_MS = 500;
/** The writer's own checkpoint, past this many pages of log (SQLite's default is 1,000). */
export const BACKSTOP_CHECKPOINT_PAGES = 20_000;

// The worker is plain CommonJS, evaluated as is: no build step or loader needed, from source or dist.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage(String(err && err.message || err));
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, onError: (err: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver, intervalMs: CHECKPOINT_INTERVAL_MS },
    // It holds nothing but a connection: a small heap keeps its memory small.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  });
  worker.on('message', (message: unknown) => onError(new Error(`WAL checkpoint failed: ${String(message)}`)));
  worker.on('error', onError);
  // It must not keep the process alive; the writer's own checkpoints take over if it is gone.
  worker.unref();
  return {
    stop: async () => {
      // Held until it has closed its connection (the files may be removed next).
      worker.ref();
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}
