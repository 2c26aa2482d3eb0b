import { CliError } from './errors.ts';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Node's fetch, JSON in and out, with the server's error body as one line (`Type: message`), or the
 * reason it could not be reached, as a CliError. (The CLI runs without the dev dependencies, so
 * without @botpress/client.)
 */
export async function requestJson<T>(url: string, init: RequestInit, server: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new CliError(`cannot reach ${server}: ${cause}`);
  }
  const text = await response.text();
  let answer: unknown;
  try {
    answer = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the status below tells what happened
    answer = undefined;
  }
  if (!response.ok) {
    const error = answer as { type?: unknown; message?: unknown } | undefined;
    if (typeof error?.type === 'string' && typeof error.message === 'string') {
      throw new CliError(`${error.type}: ${error.message}`);
    }
    throw new CliError(`${init.method ?? 'GET'} ${url} answered HTTP ${response.status}`);
  }
  return answer as T;
}

/** One of a Parley server's APIs, with the headers of every request (credentials). */
export class ApiClient {
  constructor(
    readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  request<T>(method: Method, route: string, body?: unknown): Promise<T> {
    const sendsBody = body !== undefined || method === 'DELETE';
    return requestJson<T>(
      `${this.url.replace(/\/+$/, '')}${route}`,
      {
        method,
        headers: { ...this.headers, ...(sendsBody && { 'content-type': 'application/json' }) },
        ...(sendsBody && { body: JSON.stringify(body ?? {}) }),
      },
      this.url,
    );
  }
}
