// A load generator as a process of its own on the load core, taking jobs from bench/run.ts over IPC:
// `JobProcess` is bench/run.ts's side, `serveJobs` the generator's. bench/load.ts and
// bench/lib/tables-load.ts are both served this way.
import { LOAD_CPU, start } from './procs.ts';
import type { Started } from './procs.ts';

/** A job for the process; id 0 is never sent: it is the process saying it is ready. */
export type JobRequest<Job> = { id: number; job: Job };
/** A job's result, or why it failed. */
export type JobResponse<Result> = { id: number; result?: Result; error?: string };

const START_TIMEOUT_MS = 30_000;

export class JobProcess<Job, Result> {
  private next = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (result: Result) => void; reject: (error: Error) => void }
  >();

  private constructor(
    readonly proc: Started,
    private readonly name: string,
  ) {
    proc.child.on('message', (message: JobResponse<Result>) => {
      const w = this.waiting.get(message.id);
      if (!w) return;
      this.waiting.delete(message.id);
      if (message.error !== undefined) w.reject(new Error(`${name}: ${message.error}`));
      // Every job answers with a result; the ready message (id 0) carries none, and none is read.
      else w.resolve(message.result as Result);
    });
    void proc.exited.then((code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`the ${name} exited (${code})`));
      this.waiting.clear();
    });
  }

  /** Starts `script` (TypeScript, through tsx) pinned to the load core, and waits until it is ready. */
  static async start<Job, Result>(
    name: string,
    script: string,
    cwd: string,
  ): Promise<JobProcess<Job, Result>> {
    const proc = start(name, process.execPath, ['--import', 'tsx', script], {
      cwd,
      cpu: LOAD_CPU,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const jobs = new JobProcess<Job, Result>(proc, name);
    await new Promise<void>((resolve, reject) => {
      jobs.waiting.set(0, { resolve: () => resolve(), reject });
      setTimeout(
        () => reject(new Error(`the ${name} did not start:\n${proc.output()}`)),
        START_TIMEOUT_MS,
      ).unref();
    });
    return jobs;
  }

  /** Runs a job; `T` names which of the process's results this job answers with. */
  run<T extends Result = Result>(job: Job): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: (result) => resolve(result as T), reject });
      this.proc.child.send({ id, job } satisfies JobRequest<Job>);
    });
  }
}

/** The generator's side: answers each job with `handle`'s result or its error, and says it is ready. */
export function serveJobs<Job, Result>(script: string, handle: (job: Job) => Promise<Result>): void {
  const send = process.send?.bind(process);
  if (!send) {
    process.stderr.write(`${script} is started by bench/run.ts (it takes jobs over IPC)\n`);
    process.exit(2);
  }
  process.on('message', (request: JobRequest<Job>) => {
    handle(request.job).then(
      (result) => send({ id: request.id, result } satisfies JobResponse<Result>),
      (err: unknown) =>
        send({
          id: request.id,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        } satisfies JobResponse<Result>),
    );
  });
  process.on('disconnect', () => process.exit(0));
  send({ id: 0 } satisfies JobResponse<Result>);
}
