// One way to call Parley's HTTP APIs from the browser (the transport of the contract's clients,
// client.ts): JSON in and out, and every failure turned into an ApiError (the server's error body) or a
// NetworkError (no answer at all), so every screen can tell the operator what went wrong.

import { HEADERS } from '../../../src/contract/headers.ts';

/** Who the console calls as: a personal access token, and the workspace the Admin API acts in. */
export interface Credentials {
  token: string;
  workspaceId?: string;
}

/** A non-2xx answer: the server's `{ id, code, type, message }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly id?: string,
  ) {
    super(message);
  }
}

/** No answer: the server is down or the network is gone. Worth retrying. */
export class NetworkError extends Error {}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * Credentials other than the session's: another token (signing in) or none at all (the Chat API).
   * A 401 then does not end the session.
   */
  credentials?: Credentials | null;
}

/** What the session does when the server refuses its token (401) or its role (403). */
export interface SessionHandlers {
  ended(error: ApiError): void;
  forbidden(error: ApiError): void;
}

let session: Credentials | undefined;
let handlers: SessionHandlers | undefined;

/** The credentials of every request from now on, and what to do when the server refuses them. */
export function setSessionCredentials(credentials: Credentials | undefined, on?: SessionHandlers): void {
  session = credentials;
  handlers = on;
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const credentials = options.credentials === undefined ? session : options.credentials;
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (credentials) {
    headers[HEADERS.authorization] = `Bearer ${credentials.token}`;
    if (credentials.workspaceId) headers[HEADERS.workspaceId] = credentials.workspaceId;
  }
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.signal && { signal: options.signal }),
    });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw new NetworkError('The Parley server cannot be reached');
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (response.ok) return body as T;
  const error = errorOf(response.status, body);
  if (options.credentials === undefined && session) {
    if (error.status === 401) handlers?.ended(error);
    if (error.status === 403) handlers?.forbidden(error);
  }
  throw error;
}

function errorOf(status: number, body: unknown): ApiError {
  const { type, message, id } = (body ?? {}) as { type?: unknown; message?: unknown; id?: unknown };
  return new ApiError(
    status,
    typeof type === 'string' ? type : 'Unknown',
    typeof message === 'string' ? message : `The server answered HTTP ${status}`,
    typeof id === 'string' ? id : undefined,
  );
}
