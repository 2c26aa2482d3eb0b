import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../domain/shared/errors.ts';
import { errorResponses } from '../contract/models.ts';
import { METRICS_PATH } from '../contract/metrics.ts';

const tags = ['Operations'];
const Status = Type.Object({ status: Type.String() });

/** Liveness, readiness, metrics and the API description. */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    METRICS_PATH,
    {
      schema: {
        operationId: 'metrics',
        tags,
        summary: 'Counts and timings in the Prometheus text format (no ids, no content)',
        security: [],
      },
    },
    async (_request, reply) =>
      reply.type(app.metrics.registry.contentType).send(await app.metrics.registry.metrics()),
  );

  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'health',
        tags,
        summary: 'Whether the process is up',
        security: [],
        response: { 200: Status },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'ready',
        tags,
        summary: 'Whether the server can serve: its store answers',
        security: [],
        response: { 200: Status, ...errorResponses },
      },
    },
    async (request, reply) => {
      try {
        await app.domain.ping();
        return { status: 'ready' };
      } catch (err) {
        request.log.warn({ err }, 'store unreachable');
        const error = new ApiError('Internal', 'The store is unreachable');
        return reply.code(503).send({ ...error.toBody(), code: 503 });
      }
    },
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'openapi',
        tags,
        summary: 'This API description (OpenAPI 3)',
        security: [],
      },
    },
    async () => app.swagger(),
  );
};
