// One request to the test model server and its answer: the record a test reads afterwards (what came,
// how it ended), and the ways a route answers (JSON, OpenAI's error shape, dropping the connection).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How an exchange ended: `answered` (the whole answer was sent), `aborted` (the client went away
 * before it was), `dropped` (the server cut the connection on purpose: a failure mode, or `close()`).
 */
export type Outcome = 'answered' | 'aborted' | 'dropped';

/** A request as the server received it. */
export interface ReceivedRequest {
  method: string;
  /** The path without the query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body parsed; a multipart body as its fields and files; a body that is not JSON as text. */
  body: unknown;
  /** Which of the server's connections carried it, counted from 1 as they were accepted. */
  connection: number;
  /** Set once the exchange ends. */
  outcome?: Outcome;
  /** Resolves when the exchange ends. */
  settled: Promise<Outcome>;
}

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
export interface OpenAiError {
  message: string;
  type: string;
  param?: string | null;
  code?: string | null;
}

export class Exchange {
  readonly record: ReceivedRequest;
  /** Set by a `cut` failure: a stream stops after this many token chunks, a JSON answer halfway. */
  cutAfterChunks: number | undefined;
  readonly #left = new AbortController();
  #dropped = false;

  constructor(
    readonly request: IncomingMessage,
    readonly response: ServerResponse,
    received: Omit<ReceivedRequest, 'settled'>,
  ) {
    const settled = new Promise<Outcome>((resolve) => {
      response.on('close', () => {
        const outcome = response.writableFinished ? 'answered' : this.#dropped ? 'dropped' : 'aborted';
        this.record.outcome = outcome;
        this.#left.abort();
        resolve(outcome);
      });
    });
    this.record = { ...received, settled };
  }

  /** Whether the connection is gone: writing more would be lost. */
  get gone(): boolean {
    return this.#left.signal.aborted;
  }

  /** Waits `ms`, or less if the connection goes away meanwhile. */
  async pause(ms: number): Promise<void> {
    if (ms <= 0 || this.gone) return;
    try {
      await sleep(ms, undefined, { signal: this.#left.signal });
    } catch {
      // The connection went away: `gone` says so to whoever writes next.
    }
  }

  sendJson(status: number, value: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(value);
    if (this.cutAfterChunks !== undefined) {
      this.response.writeHead(status, { 'content-type': 'application/json', ...headers });
      this.response.write(text.slice(0, Math.floor(text.length / 2)));
      this.cut();
      return;
    }
    this.response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    });
    this.response.end(text);
  }

  sendError(status: number, error: OpenAiError, headers: Record<string, string> = {}): void {
    this.sendJson(
      status,
      {
        error: {
          message: error.message,
          type: error.type,
          param: error.param ?? null,
          code: error.code ?? null,
        },
      },
      headers,
    );
  }

  /** Drops the connection with a TCP reset before answering, as a broken network would. */
  reset(): void {
    this.#dropped = true;
    this.request.socket.resetAndDestroy();
  }

  /** Ends the connection once what was written is sent, without ending the answer: a cut in the middle. */
  cut(): void {
    this.#dropped = true;
    this.request.socket.end();
  }

  /** Marks the exchange as ended by the server (closing), not by the client. */
  markDropped(): void {
    this.#dropped = true;
  }
}
