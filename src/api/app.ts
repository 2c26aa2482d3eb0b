import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import qs from 'qs';
import type { LogLevel } from '../config.ts';
import type { Domain } from '../domain/index.ts';
import { adminApi } from './admin/index.ts';
import { chatApi } from './chat/index.ts';
import { installAuth } from './auth.ts';
import { installErrorHandling } from './errors.ts';
import { LARGEST_PAYLOAD } from './limits.ts';
import { opsRoutes } from './ops.ts';
import { runtimeApi } from './runtime/index.ts';
import { validatorCompiler } from './validation.ts';

declare module 'fastify' {
  interface FastifyInstance {
    domain: Domain;
  }
}

export interface AppOptions {
  domain: Domain;
  logLevel: LogLevel;
  chatPingIntervalMs: number;
  version: string;
}

/** Every API on one Fastify instance; the caller decides where it listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      // Credentials travel in headers; nothing of a request's headers is logged.
      redact: ['req.headers.authorization', 'req.headers["x-user-key"]'],
    },
    // One line per response instead of Fastify's two (see the onResponse hook).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: LARGEST_PAYLOAD,
    return503OnClosing: true,
    // Query strings as the official clients encode them: `tags.k=v`, repeated keys for arrays.
    routerOptions: {
      querystringParser: (query) => qs.parse(query, { allowDots: true, depth: 4, parameterLimit: 1000 }),
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.decorate('domain', options.domain);

  // DELETE requests of the official clients carry `content-type: application/json`; some send no body at all.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    return parseJson(request, text, done);
  });

  installErrorHandling(app);
  installAuth(app, options.domain);

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.routeOptions.url ?? request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Parley',
        version: options.version,
        description:
          'Runtime, Chat and Admin APIs of a Parley server, wire-compatible with the hosted product.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A personal access token or a bot API key' },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(opsRoutes);
  await app.register(adminApi, { prefix: '/v1/admin' });
  await app.register(runtimeApi, { prefix: '/v1/chat' });
  await app.register(chatApi, {
    prefix: '/chat/:webhookId',
    chat: options.domain.chat,
    pingIntervalMs: options.chatPingIntervalMs,
  });
  return app;
}
