import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import qs from 'qs';
import type { LogLevel } from '../config.ts';
import { HEADERS } from '../contract/headers.ts';
import type { Domain } from '../domain/index.ts';
import type { Metrics } from '../metrics.ts';
import { adminApi } from './admin/index.ts';
import { chatApi } from './chat/index.ts';
import { consoleRoutes } from './console/index.ts';
import { isUpgradeRequest } from './headers.ts';
import { installErrorHandling } from './errors.ts';
import { installSandboxConnections } from './sandbox-connections.ts';
import { SECURITY_SCHEMES } from './openapi-security.ts';
import { LARGEST_PAYLOAD } from './limits.ts';
import { healthRoutes } from './health.ts';
import { runtimeApi } from './runtime/index.ts';
import { cognitiveApi } from './cognitive/index.ts';
import { webchatApi } from './webchat/index.ts';
import { webchatAssets } from './webchat/assets.ts';
import { filesApi } from './files/index.ts';
import { tablesApi } from './tables/index.ts';
import { webhookIngressApi } from './webhooks/index.ts';
import { devTunnelRoutes } from './dev-tunnel.ts';
import { limitRequests } from './rate-limits.ts';
import type { RateLimits } from './rate-limits.ts';
import { boundConnections, Refusals, serverOptions } from './connections.ts';
import type { ConnectionLimits } from './connections.ts';
import type { ProxyTrust } from './client-address.ts';
import { watchBodies } from './slow-bodies.ts';
import { recordRoutes } from './route-list.ts';
import { fileContentRoutes } from './files/content.ts';
import { contentOriginServesContentOnly } from './files/content-origin.ts';
import { CONTENT_PREFIX } from '../domain/files/files.ts';
import { APIS } from '../contract/apis.ts';
import { NAMED_MODELS } from '../contract/models.ts';
import { jsonValidator, serializerFor, serializerOnFirstUse, textValidator } from '../handlers/validation.ts';
import { onFirstUse } from '../domain/shared/json-schema.ts';

declare module 'fastify' {
  interface FastifyInstance {
    domain: Domain;
    metrics: Metrics;
  }
}

export interface AppOptions {
  domain: Domain;
  metrics: Metrics;
  logLevel: LogLevel;
  chatPingIntervalMs: number;
  version: string;
  /** Origins allowed to call the Admin and Runtime APIs from a browser; undefined: none. */
  corsOrigins?: string[] | undefined;
  /** Undefined: no rate limits. */
  rateLimits?: RateLimits | undefined;
  /** How long a connection may take, and how many may be open. */
  connections: ConnectionLimits;
  /** The reverse proxies whose `X-Forwarded-For` is believed; undefined: none. */
  trustProxy?: ProxyTrust | undefined;
  /** `bp dev` may open its tunnel here (PARLEY_DEV_TUNNEL). */
  devTunnel?: boolean;
}

/** Every API on one Fastify instance; the caller decides where it listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const refusals = new Refusals(options.metrics.connectionsRefused);
  const app = Fastify({
    ...serverOptions(options.connections, refusals.count),
    // The client's address (rate limits, connection limits, logs): behind trusted proxies, the one they name.
    trustProxy: options.trustProxy ?? false,
    logger: {
      level: options.logLevel,
      // Credentials travel in headers; nothing of a request's headers is logged.
      redact: [
        `req.headers.${HEADERS.authorization}`,
        `req.headers["${HEADERS.userKey}"]`,
        `req.headers["${HEADERS.adminSecret}"]`,
      ],
    },
    // One line per response instead of Fastify's two (see the onResponse hook).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: LARGEST_PAYLOAD,
    return503OnClosing: true,
    // Query strings as the official clients encode them: `tags.k=v`, repeated keys for arrays.
    routerOptions: {
      // The official webchat joins its apiUrl and paths as they are: `{apiUrl}/` gives `//{clientId}/...`.
      ignoreDuplicateSlashes: true,
      querystringParser: (query) => qs.parse(query, { allowDots: true, depth: 4, parameterLimit: 1000 }),
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(({ schema, httpPart }) =>
    onFirstUse(() => (httpPart === 'body' ? jsonValidator(schema) : textValidator(schema))),
  );
  // The in-process client of bot code serializes answers with the same function.
  app.setSerializerCompiler(({ schema }) => serializerOnFirstUse(() => serializerFor(schema)));
  recordRoutes(app);
  app.decorate('domain', options.domain);
  app.decorate('metrics', options.metrics);

  boundConnections(app, options.connections, options.trustProxy, refusals.count);
  watchBodies(
    app,
    {
      graceMs: options.connections.headersTimeoutMs,
      timeoutMs: options.connections.bodyTimeoutMs,
      minBytesPerSecond: options.connections.bodyMinBytesPerSecond,
    },
    (request, why) => {
      refusals.count('slow_body');
      request.log.debug({ address: request.ip, url: request.routeOptions.url, why }, 'request body cut');
    },
  );
  refusals.reportTo(app);

  // DELETE requests of the official clients carry `content-type: application/json`; some send no body at all.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    return parseJson(request, text, done);
  });

  installErrorHandling(app);
  installSandboxConnections(app);
  contentOriginServesContentOnly(app, options.domain.links);

  app.addHook('onResponse', async (request, reply) => {
    // The route's pattern, never its URL: ids would make a series per record.
    options.metrics.requests
      .labels(request.method, request.routeOptions.url ?? 'unmatched', String(reply.statusCode))
      .observe(reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        url: request.routeOptions.url ?? request.url.split('?')[0],
        address: request.ip,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
    // An upgrade request answered over HTTP (refused, or a route that does not upgrade) owns a socket the
    // HTTP server let go of when it saw the upgrade: nothing else would ever close it.
    if (isUpgradeRequest(request)) request.raw.socket.destroy();
  });

  // The named models are registered where every API sees them: the OpenAPI document lists each under its
  // `$id` (`components.schemas`), and the operations reference them there.
  for (const model of NAMED_MODELS) app.addSchema(model);
  await app.register(swagger, {
    refResolver: {
      // A named model keeps its name; any other schema with an `$id` gets the plugin's default one.
      buildLocalReference: (schema, _baseUri, _fragment, index) =>
        typeof schema.$id === 'string' ? schema.$id : `def-${index}`,
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Parley',
        version: options.version,
        description:
          'Runtime, Chat, Admin and Files APIs of a Parley server, wire-compatible with the hosted product.',
      },
      components: { securitySchemes: SECURITY_SCHEMES },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes);
  const { rateLimits } = options;
  // Each group counts per client address, and per token, end user or webhook once verified.
  await app.register(async (tokenApis) => {
    if (rateLimits) await limitRequests(tokenApis, rateLimits, 'api');
    await tokenApis.register(adminApi, { prefix: APIS.admin.prefix, corsOrigins: options.corsOrigins });
    await tokenApis.register(runtimeApi, { prefix: APIS.runtime.prefix, corsOrigins: options.corsOrigins });
    await tokenApis.register(cognitiveApi, {
      prefix: APIS.cognitive.prefix,
      corsOrigins: options.corsOrigins,
    });
    await tokenApis.register(filesApi, { prefix: APIS.files.prefix });
    await tokenApis.register(tablesApi, { prefix: APIS.tables.prefix });
  });
  await app.register(fileContentRoutes, { prefix: CONTENT_PREFIX });
  await app.register(async (userApis) => {
    if (rateLimits) await limitRequests(userApis, rateLimits, 'chat');
    await userApis.register(chatApi, {
      prefix: APIS.chat.prefix,
      pingIntervalMs: options.chatPingIntervalMs,
    });
    await userApis.register(webchatApi, {
      prefix: APIS.webchat.prefix,
      pingIntervalMs: options.chatPingIntervalMs,
    });
  });
  await app.register(async (ingress) => {
    if (rateLimits) await limitRequests(ingress, rateLimits, 'webhook');
    await ingress.register(webhookIngressApi, { prefix: '/webhooks/:webhookId' });
  });
  if (options.devTunnel) await app.register((tunnel) => devTunnelRoutes(tunnel, options.domain.devTunnels));
  await app.register(webchatAssets);
  await app.register(consoleRoutes);
  return app;
}
