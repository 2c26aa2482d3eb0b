// The tables scenario's load generator: started by bench/run.ts (pinned to the load core when it can, as
// bench/load.ts is), it takes jobs over IPC, POSTs their prepared JSON bodies with plain fetch,
// `concurrency` in flight, checks every answer and times it. It logs nothing per request.
import { performance } from 'node:perf_hooks';
import { serveJobs } from './job-process.ts';
import type { RunResult } from './protocol.ts';
import { summarize } from './stats.ts';

export interface TablesLoadJob {
  /** The whole URL POSTed to. */
  url: string;
  headers: Record<string, string>;
  /** The bodies, sent in turn; the first `warmup` ones are sent (and checked) first and not measured. */
  bodies: string[];
  warmup: number;
  concurrency: number;
  /**
   * `found`: a findTableRows answer with rows, each matching the body's equality filter; `upserted`: an
   * upsertTableRows answer without errors, with `inserted` and `updated` rows as said.
   */
  expect: { kind: 'found' } | { kind: 'upserted'; inserted: number; updated: number };
}

const TIMEOUT_MS = 60_000;

/** Why an answer is not what the job expects (undefined: it is). */
function problem(job: TablesLoadJob, body: string, status: number, text: string): string | undefined {
  const request = `POST ${new URL(job.url).pathname} ${body.length > 300 ? `${body.slice(0, 300)}…` : body}`;
  if (status !== 200) return `${request} answered ${status}: ${text.slice(0, 500)}`;
  const answer = JSON.parse(text) as {
    rows?: Record<string, unknown>[];
    inserted?: unknown[];
    updated?: unknown[];
    errors?: string[];
  };
  if (job.expect.kind === 'found') {
    const filter = (JSON.parse(body) as { filter: Record<string, unknown> }).filter;
    if (!answer.rows?.length) return `${request} matched no row (a bench bug): ${text.slice(0, 300)}`;
    const wrong = answer.rows.find((row) => Object.entries(filter).some(([k, v]) => row[k] !== v));
    if (wrong) return `${request} answered a row that does not match: ${JSON.stringify(wrong)}`;
    return undefined;
  }
  const { inserted, updated } = job.expect;
  if (answer.errors?.length) return `${request} refused rows: ${answer.errors.slice(0, 3).join('; ')}`;
  if (answer.inserted?.length !== inserted || answer.updated?.length !== updated) {
    return `${request} inserted ${answer.inserted?.length} and updated ${answer.updated?.length} rows, not ${inserted} and ${updated}`;
  }
  return undefined;
}

async function run(job: TablesLoadJob): Promise<RunResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  let measuring = false;
  const worker = async (last: number) => {
    while (next < last) {
      const i = next++;
      const body = job.bodies[i] as string;
      const started = performance.now();
      try {
        const res = await fetch(job.url, {
          method: 'POST',
          headers: { ...job.headers, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        const text = await res.text();
        const elapsed = performance.now() - started;
        const wrong = problem(job, body, res.status, text);
        if (wrong) throw new Error(wrong);
        if (measuring) latencies.push(elapsed);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  const phase = (last: number) =>
    Promise.all(Array.from({ length: Math.min(job.concurrency, last - next) }, () => worker(last)));
  await phase(Math.min(job.warmup, job.bodies.length));
  measuring = true;
  const started = performance.now();
  await phase(job.bodies.length);
  const windowMs = performance.now() - started;
  return {
    measured: latencies.length,
    // The warm-up's too: every answer is checked.
    errors,
    ...(firstError !== undefined && { firstError }),
    windowMs,
    rate: (latencies.length / windowMs) * 1000,
    latency: summarize(latencies),
  };
}

serveJobs('bench/lib/tables-load.ts', run);
