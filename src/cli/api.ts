import { mountOf } from '../contract/apis.ts';
import { clientOf, targetOf } from '../contract/client.ts';
import type { Client } from '../contract/client.ts';
import type { OperationSpec } from '../contract/operation.ts';
import { CliError } from './errors.ts';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

/** A server's error answer: printed as one line, and its status for a command that acts on it. */
export class ServerAnswerError extends CliError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Node's fetch, JSON in and out, with the server's error body as one line (`Type: message`), or the
 * reason it could not be reached, as a CliError. (The CLI runs without the dev dependencies, so
 * without @botpress/client.)
 */
export async function requestJson(url: string, init: RequestInit, server: string): Promise<unknown> {
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
      throw new ServerAnswerError(response.status, `${error.type}: ${error.message}`);
    }
    throw new ServerAnswerError(
      response.status,
      `${init.method ?? 'GET'} ${url} answered HTTP ${response.status}`,
    );
  }
  return answer;
}

/**
 * The contract's client of one of a server's APIs, with the headers of every request (credentials);
 * `params` fill the API's own mount (the Chat API's webhook id).
 */
export function apiClient<Ops extends readonly OperationSpec[]>(
  url: string,
  api: { prefix: string; operations: Ops },
  headers: Record<string, string>,
  params: Record<string, string> = {},
): Client<Ops> {
  return clientAt(`${url.replace(/\/+$/, '')}${mountOf(api, params)}`, api.operations, headers);
}

/** The contract's client of an API whose base URL is given whole (a chat channel's webhook URL). */
export function clientAt<Ops extends readonly OperationSpec[]>(
  base: string,
  operations: Ops,
  headers: Record<string, string>,
): Client<Ops> {
  return clientOf(operations, (wire) =>
    requestJson(
      `${base}${targetOf(wire)}`,
      {
        method: wire.method,
        headers: {
          ...headers,
          ...wire.headers,
          ...(wire.body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(wire.body !== undefined && { body: JSON.stringify(wire.body) }),
      },
      base,
    ),
  );
}
