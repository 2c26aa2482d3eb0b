import { randomBytes } from 'node:crypto';
import { isStatementTimeout } from '../../store/errors.ts';

/** The error catalogue of the wire reference (§3.2): every type the official clients map to a class. */
export const ERROR_TYPES = {
  InvalidPayload: 400,
  InvalidJsonSchema: 400,
  InvalidDataFormat: 400,
  InvalidIdentifier: 400,
  ReferenceNotFound: 400,
  InvalidQuery: 400,
  Runtime: 400,
  BreakingChanges: 400,
  Unauthorized: 401,
  PaymentRequired: 402,
  Forbidden: 403,
  QuotaExceeded: 403,
  ResourceNotFound: 404,
  MethodNotFound: 405,
  RelationConflict: 409,
  ReferenceConstraint: 409,
  ResourceLockedConflict: 409,
  AlreadyExists: 409,
  ResourceGone: 410,
  PayloadTooLarge: 413,
  LimitExceeded: 413,
  UnsupportedMediaType: 415,
  RateLimited: 429,
  Unknown: 500,
  Internal: 500,
  OperationTimeout: 504,
} as const;

export type ErrorType = keyof typeof ERROR_TYPES;

export interface ErrorBody {
  id: string;
  code: number;
  type: ErrorType;
  message: string;
  metadata?: Record<string, unknown>;
}

/** Error ids have the hosted product's shape: `err_YYYYMMDDHHMMSSx` and 8 hex digits. */
export function newErrorId(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:TZ]/g, '')
    .split('.')[0];
  return `err_${stamp}x${randomBytes(4).toString('hex').toUpperCase()}`;
}

/** A failure that is part of the API contract: it becomes the `{ id, code, type, message }` body. */
export class ApiError extends Error {
  readonly code: number;
  readonly id = newErrorId();

  constructor(
    readonly type: ErrorType,
    message: string,
    readonly metadata?: Record<string, unknown>,
  ) {
    super(message);
    this.code = ERROR_TYPES[type];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { id: this.id, code: this.code, type: this.type, message: this.message };
    if (this.metadata) body.metadata = this.metadata;
    return body;
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
