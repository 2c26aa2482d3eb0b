import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { ApiError, asApiError, RetryLater } from '../domain/shared/errors.ts';
import { HEADERS } from '../contract/headers.ts';
import { ERROR_TYPES } from '../domain/shared/error-types.ts';
import type { ErrorType } from '../domain/shared/error-types.ts';

/** A route asked for what its API did not attach to the request: a fault of the server, not the caller. */
export function unavailable(what: string): never {
  throw new ApiError('Internal', `${what} is not available on this route`);
}

/** Framework errors by HTTP status, for the few that reach the handler without being an ApiError. */
const TYPE_BY_STATUS: Partial<Record<number, ErrorType>> = {
  400: 'InvalidPayload',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'ResourceNotFound',
  405: 'MethodNotFound',
  409: 'AlreadyExists',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'RateLimited',
  504: 'OperationTimeout',
};

function toApiError(err: FastifyError): ApiError | undefined {
  const known = asApiError(err);
  if (known) return known;
  if (err.validation) {
    return new ApiError(
      'InvalidPayload',
      `${err.validationContext ?? 'request'}${err.message.replace(/^[a-z]+/, '')}`,
    );
  }
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ApiError('PayloadTooLarge', 'The request body is larger than this API accepts');
  }
  const status = err.statusCode ?? 500;
  const type = TYPE_BY_STATUS[status];
  if (status < 500 && type) return new ApiError(type, err.message);
  return undefined;
}

/** The most of a refused body the server reads on, so that its sender can read the 413. */
const MAX_DRAINED_BYTES = 256 * 1024 * 1024;

/**
 * A body larger than the limit is refused before it is read whole. Closing the connection at once would
 * make the sender's next writes fail, and its system may then drop the answer unread (a reset): so when
 * the body's declared length is within reason, the rest is read and discarded, and the connection stays
 * open. A body of unknown or unreasonable length still closes the connection.
 */
function readTheRest(raw: IncomingMessage, reply: FastifyReply): void {
  const declared = Number(raw.headers['content-length']);
  if (!Number.isFinite(declared) || declared > MAX_DRAINED_BYTES || raw.complete) return;
  reply.removeHeader('connection');
  raw.resume();
}

/** Every error leaves as `{ id, code, type, message }`; a fault is logged with its id and told apart from nothing. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiError = toApiError(err);
    if (apiError?.type === 'PayloadTooLarge') readTheRest(request.raw, reply);
    if (apiError) {
      if (apiError.code >= 500) request.log.error({ err, errorId: apiError.id }, apiError.message);
      if (apiError instanceof RetryLater)
        reply.header(HEADERS.retryAfter, String(apiError.retryAfterSeconds));
      return reply.code(apiError.code).send(apiError.toBody());
    }
    const internal = new ApiError('Internal', 'An internal error occurred');
    request.log.error({ err, errorId: internal.id }, 'request failed');
    return reply.code(ERROR_TYPES.Internal).send(internal.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError('ResourceNotFound', `No route ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(error.code).send(error.toBody());
  });
}
