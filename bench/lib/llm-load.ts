// The LLM scenario's load generator: started by bench/run.ts on the load core (as bench/load.ts is), it
// takes jobs over IPC and runs streamed completions, `concurrency` at a time on keep-alive connections,
// either straight to the provider (`/v1/chat/completions`, server-sent events) or through Parley's
// Cognitive API (`/v2/cognitive/generate-text-stream`, NDJSON). Each stream is timed from its request to
// the first chunk that carries text (time to first token), to its last byte, and from its last text to
// its last byte (what the end of the stream adds). Its text is checked: a stream that is cut, mixed
// with another's or answered from a cache counts as an error.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { serveJobs } from './job-process.ts';
import { expectedReply, prompt } from './llm-prompt.ts';

/** Who answers: the provider itself, or Parley in front of it. */
export type LlmWire = 'provider' | 'parley';

export interface LlmStreamsJob {
  wire: LlmWire;
  /** The whole URL POSTed to. */
  url: string;
  headers: Record<string, string>;
  /** The model the request names: the provider's model id, or one of Parley's selectors. */
  model: string;
  streams: number;
  concurrency: number;
  /**
   * The clients start this far apart in all (the k-th of C after k/C of it): about one stream's length,
   * so that the streams in flight are at every stage of their answer rather than starting all at once.
   */
  staggerMs: number;
  /** The number of the job's first stream: each prompt carries its stream's number, each reply is its own. */
  firstStream: number;
}

export interface LlmStreamsResult {
  /** For each stream answered in full, in milliseconds: from its request to its first text, to its last byte. */
  ttftMs: number[];
  totalMs: number[];
  /** From its last text to its last byte. */
  tailMs: number[];
  errors: number;
  firstError?: string;
  windowMs: number;
  /** Set by the orchestrator: CPU time of Parley's processes, and of this one, over the job's wall time. */
  serverCores?: number;
  loadCores?: number;
}

const TIMEOUT_MS = 30_000;

/** The request of each wire: Parley's asks for no cached answer; the provider's is the one Parley sends it. */
function requestBody(job: LlmStreamsJob, stream: number): unknown {
  const messages = [{ role: 'user', content: prompt(stream) }];
  return job.wire === 'parley'
    ? { model: job.model, messages, options: { skipCache: true } }
    : { model: job.model, messages, stream: true, stream_options: { include_usage: true } };
}

/** Reads an answer as it comes: the text of each event, and whether the stream said it was complete. */
interface AnswerReader {
  feed(text: string): string[];
  readonly complete: boolean;
}

/** Events that end with `separator`, each read by `read` (its text, if any; `done()` at the last event). */
function splitReader(
  separator: string,
  read: (event: string, done: () => void) => string | undefined,
): AnswerReader {
  let pending = '';
  let complete = false;
  const done = () => {
    complete = true;
  };
  return {
    feed(text) {
      pending += text;
      const texts: string[] = [];
      let cut: number;
      while ((cut = pending.indexOf(separator)) >= 0) {
        const event = pending.slice(0, cut);
        pending = pending.slice(cut + separator.length);
        const piece = event === '' ? undefined : read(event, done);
        if (piece) texts.push(piece);
      }
      return texts;
    },
    get complete() {
      return complete;
    },
  };
}

/** OpenAI's stream: `data: <chunk>` events, the text in `choices[0].delta.content`, last `data: [DONE]`. */
function providerReader(): AnswerReader {
  return splitReader('\n\n', (event, done) => {
    if (!event.startsWith('data: ')) return undefined;
    const data = event.slice(6);
    if (data === '[DONE]') {
      done();
      return undefined;
    }
    const chunk = JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] };
    const content = chunk.choices?.[0]?.delta?.content;
    return typeof content === 'string' ? content : undefined;
  });
}

/** Parley's stream: a JSON line per chunk, the text in `output`, the last line `finished: true`. */
function parleyReader(): AnswerReader {
  return splitReader('\n', (line, done) => {
    const chunk = JSON.parse(line) as { output?: unknown; finished?: unknown };
    if (chunk.finished === true) done();
    return typeof chunk.output === 'string' ? chunk.output : undefined;
  });
}

/** Every stream's connection is kept open for the next one, to each server. */
const agent = new http.Agent({ keepAlive: true });

function streamOnce(
  job: LlmStreamsJob,
  stream: number,
): Promise<{ ttftMs: number; totalMs: number; tailMs: number }> {
  const body = JSON.stringify(requestBody(job, stream));
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(job.url, {
      method: 'POST',
      agent,
      headers: {
        ...job.headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    request.setNoDelay(true);
    request.setTimeout(TIMEOUT_MS, () =>
      request.destroy(new Error(`stream ${stream}: no answer in ${TIMEOUT_MS} ms`)),
    );
    request.on('error', reject);
    request.on('response', (response) => {
      response.setEncoding('utf8');
      response.on('error', reject);
      if (response.statusCode !== 200) {
        let text = '';
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          reject(new Error(`POST ${job.url} answered ${response.statusCode}: ${text.slice(0, 300)}`)),
        );
        return;
      }
      const reader = job.wire === 'parley' ? parleyReader() : providerReader();
      let text = '';
      let firstText: number | undefined;
      let lastText = 0;
      response.on('data', (data: string) => {
        const at = performance.now();
        for (const piece of reader.feed(data)) {
          firstText ??= at;
          lastText = at;
          text += piece;
        }
      });
      response.on('end', () => {
        const ended = performance.now();
        const expected = expectedReply(stream);
        if (!reader.complete) reject(new Error(`stream ${stream} ended before its last event`));
        else if (text !== expected || firstText === undefined)
          reject(new Error(`stream ${stream} answered "${text.slice(0, 120)}", not "${expected}"`));
        else resolve({ ttftMs: firstText - started, totalMs: ended - started, tailMs: ended - lastText });
      });
    });
    request.end(body);
  });
}

async function run(job: LlmStreamsJob): Promise<LlmStreamsResult> {
  const result: LlmStreamsResult = { ttftMs: [], totalMs: [], tailMs: [], errors: 0, windowMs: 0 };
  const clients = Math.min(job.concurrency, job.streams);
  let next = 0;
  const client = async (k: number) => {
    await sleep((k * job.staggerMs) / clients);
    while (next < job.streams) {
      const stream = job.firstStream + next++;
      try {
        const timed = await streamOnce(job, stream);
        result.ttftMs.push(timed.ttftMs);
        result.totalMs.push(timed.totalMs);
        result.tailMs.push(timed.tailMs);
      } catch (err) {
        result.errors++;
        result.firstError ??= (err as Error).message;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, k) => client(k)));
  result.windowMs = performance.now() - started;
  return result;
}

serveJobs('bench/lib/llm-load.ts', run);
