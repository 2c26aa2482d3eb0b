import { randomUUID } from 'node:crypto';
import { isStatementTimeout } from '../../store/errors.ts';
import { ERROR_TYPES } from './error-types.ts';
import type { ErrorType } from './error-types.ts';

/**
 * The longest error text kept with a record (a delivery's last error, an installation's failure, what a
 * bundle answered): its start says what went wrong, and a peer's long answer must not fill the store.
 */
const MAX_KEPT_ERROR_TEXT = 500;

/** An error text cut to the length kept with a record. */
export function keptErrorText(text: string): string {
  return text.slice(0, MAX_KEPT_ERROR_TEXT);
}

export interface ErrorBody {
  id: string;
  code: number;
  type: ErrorType;
  message: string;
  metadata?: Record<string, unknown>;
}

/** The error ids' time stamp of the current second (`YYYYMMDDHHMMSS`), made once a second. */
let stamped = { second: Number.NaN, text: '' };

function stampOf(now: number): string {
  const second = Math.floor(now / 1000);
  if (second !== stamped.second) {
    stamped = {
      second,
      text: new Date(second * 1000)
        .toISOString()
        .replace(/[-:TZ]/g, '')
        .slice(0, 14),
    };
  }
  return stamped.text;
}

/**
 * Error ids have the hosted product's shape: `err_YYYYMMDDHHMMSSx` and 8 hex digits. The digits are a
 * random UUID's first eight (all random): `randomUUID` draws its randomness from the system a block at a
 * time. Drawn once an id (`randomBytes`), with the time formatted each time, an id took 7 µs, 0.35 now:
 * it is made for every error answered, and admission refuses hundreds of requests a second.
 */
export function newErrorId(): string {
  return `err_${stampOf(Date.now())}x${randomUUID().slice(0, 8).toUpperCase()}`;
}

/** A failure that is part of the API contract: it becomes the `{ id, code, type, message }` body. */
export class ApiError extends Error {
  readonly code: number;
  readonly id = newErrorId();

  /**
   * `status`: another HTTP status than the type's, where the clients act on the status itself (the
   * hosted Cognitive client retries a 502, 503 or 504, whatever the type).
   */
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly metadata?: Record<string, unknown>,
    status?: number,
  ) {
    super(message);
    this.code = status ?? ERROR_TYPES[type];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { id: this.id, code: this.code, type: this.type, message: this.message };
    if (this.metadata) body.metadata = this.metadata;
    return body;
  }
}

/** Refused for now, not for good: the caller may send it again after `retryAfterSeconds` (`Retry-After`). */
export class RetryLater extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    metadata?: Record<string, unknown>,
  ) {
    super('RateLimited', message, metadata);
  }
}

export const invalidPayload = (message: string, metadata?: Record<string, unknown>) =>
  new ApiError('InvalidPayload', message, metadata);
export const unauthorized = (message: string) => new ApiError('Unauthorized', message);
export const forbidden = (message: string) => new ApiError('Forbidden', message);
export const notFound = (what: string, id: string) =>
  new ApiError('ResourceNotFound', `${what} "${id}" doesn't exist`);
export const alreadyExists = (message: string) => new ApiError('AlreadyExists', message);
export const payloadTooLarge = (message: string) => new ApiError('PayloadTooLarge', message);

/** An error as an API answers it: what the domain threw, or a limit of the store that was reached. */
export function asApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (isStatementTimeout(err)) {
    return new ApiError('OperationTimeout', 'The request took too long in the database and was cancelled');
  }
  return undefined;
}

/** The value of a read, or undefined when what it reads does not exist (any other failure is thrown). */
export async function unlessMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof ApiError && err.type === 'ResourceNotFound') return undefined;
    throw err;
  }
}
