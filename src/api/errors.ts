import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, ERROR_TYPES } from '../domain/errors.ts';
import type { ErrorType } from '../domain/errors.ts';

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
  if (err instanceof ApiError) return err;
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

/** Every error leaves as `{ id, code, type, message }`; a fault is logged with its id and told apart from nothing. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiError = toApiError(err);
    if (apiError) {
      if (apiError.code >= 500) request.log.error({ err, errorId: apiError.id }, apiError.message);
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
