import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChatKeySession, ChatScope, ChatSession } from '../domain/chat/chat.ts';
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

/** How a channel API (Chat, webchat) finds who calls: `Chat.authenticate` and `Chat.admit`. */
export interface ChannelAuth {
  authenticate(scope: ChatScope, key: string | undefined): Promise<ChatSession>;
  admit(scope: ChatScope, key: string | undefined): Promise<ChatKeySession>;
}

/**
 * Who calls a channel route: a route that queues a turn (`queuesTurn`) is decided by admission before
 * its user is read (`admit`), with its turn's conversation; its entry is left when the response closes,
 * whatever the request came to (its body refused, the client gone), if its insert did not. Any other
 * route reads its user (`authenticate`).
 */
export async function channelCaller(
  request: FastifyRequest,
  reply: FastifyReply,
  auth: ChannelAuth,
  scope: ChatScope,
  key: string | undefined,
): Promise<{ session: ChatSession } | { turn: ChatKeySession }> {
  if (request.routeOptions.config.queuesTurn !== true)
    return { session: await auth.authenticate(scope, key) };
  const turn = await auth.admit(scope, key);
  const { entry } = turn;
  if (entry) reply.raw.once('close', () => entry.leave());
  return { turn };
}
