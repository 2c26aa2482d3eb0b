import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../domain/errors.ts';
import { errorResponses } from './common.ts';

const tags = ['Operations'];
const Status = Type.Object({ status: Type.String() });

/** Liveness, readiness and the API description. */
export const opsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: { operationId: 'health', tags, response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'ready',
        tags,
        description: 'Ready when the store answers.',
        response: { 200: Status, ...errorResponses },
      },
    },
    async (request, reply) => {
      try {
        await app.domain.store.ping();
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
    { schema: { operationId: 'openapi', tags, description: 'This document.', hide: true } },
    async () => app.swagger(),
  );
};
