import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unavailable } from './errors.ts';
import { PAYLOAD_LIMITS } from './limits.ts';

/** A path parameter, if the route has it. */
export function optionalPathParam(request: FastifyRequest, name: string): string | undefined {
  const params: unknown = request.params;
  const value: unknown =
    typeof params === 'object' && params !== null ? Reflect.get(params, name) : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** A path parameter of the API's prefix (`/chat/:webhookId`, `/webchat/:clientId`). */
export function pathParam(request: FastifyRequest, name: string): string {
  return optionalPathParam(request, name) ?? unavailable(name);
}

/**
 * What the APIs of a bot's channel (Chat, webchat) share on each route: the Chat API's payload limit,
 * and an OpenAPI operation id prefixed with the API's name (their operations share names with the
 * Runtime API's).
 */
export function channelRoutes(app: FastifyInstance, operationPrefix: string): void {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.chat;
    const schema: unknown = route.schema;
    const id: unknown =
      typeof schema === 'object' && schema !== null ? Reflect.get(schema, 'operationId') : undefined;
    if (typeof id === 'string' && typeof schema === 'object' && schema !== null) {
      Reflect.set(schema, 'operationId', `${operationPrefix}${id}`);
    }
  });
}
