import websocket from '@fastify/websocket';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CHAT_TURN_HANDLERS, CHAT_USER_HANDLERS, CHAT_VISITOR_HANDLERS } from '../../handlers/chat/index.ts';
import { listenConversation } from '../../contract/chat/listen.ts';
import type {
  ChatKeySession,
  ChatSession,
  ChatVisitor,
  ListenableConversation,
} from '../../domain/chat/chat.ts';
import { channelCaller, channelRoutes, pathParam } from '../channel-routes.ts';
import { allowCors, BOT_CORS_SETTING } from '../cors.ts';
import { unavailable } from '../errors.ts';
import { userKeyOf } from '../headers.ts';
import { documentSecurity } from '../openapi-security.ts';
import { routeOperations } from '../operations.ts';
import { socketConversation, streamConversation } from './listen.ts';

declare module 'fastify' {
  interface FastifyRequest {
    chatVisitor?: ChatVisitor;
    chatSession?: ChatSession;
    /** On a route that queues a turn, in place of `chatSession`: see `channelCaller`. */
    chatTurn?: ChatKeySession;
    /** The conversation a listener opens, once its participation is checked, and where its signals stood. */
    listened?: ListenableConversation;
  }
}

export interface ChatApiOptions {
  pingIntervalMs: number;
}

const tags = ['Chat'];
const Params = Type.Object({ webhookId: Type.String() });

const visitorOf = (r: FastifyRequest): ChatVisitor => r.chatVisitor ?? unavailable('chat visitor');
const sessionOf = (r: FastifyRequest): ChatSession => r.chatSession ?? unavailable('chat session');
const turnOf = (r: FastifyRequest): ChatKeySession => r.chatTurn ?? unavailable('chat turn');
const webhookIdOf = (r: FastifyRequest): string => pathParam(r, 'webhookId');

/**
 * The Chat API of every bot's chat channel, under `/chat/{webhookId}`: what `@botpress/chat` calls.
 * Every route first finds the channel; all but the visitor routes authenticate an end user by
 * `x-user-key`, who then sees the conversations they take part in.
 */
export const chatApi: FastifyPluginAsync<ChatApiOptions> = async (app, { pingIntervalMs }) => {
  const { chat, log } = app.domain;
  const streams = new Set<() => void>();

  channelRoutes(app, 'chat_');
  app.decorateRequest('chatVisitor', undefined);
  app.decorateRequest('chatSession', undefined);
  app.decorateRequest('chatTurn', undefined);
  app.decorateRequest('listened', undefined);
  // Open streams would keep the server from closing: end them first (SSE and WebSocket), saying why.
  app.addHook('preClose', async () => {
    for (const close of [...streams]) close();
  });
  // Browsers may call a channel from the origins its bot allows (any, unless configured).
  await allowCors(app, {
    setIn: BOT_CORS_SETTING,
    origins: async (request) => (await chat.scope(webhookIdOf(request))).channel.allowedOrigins ?? '*',
  });

  // A channel's visitors: no user key needed (yet).
  await app.register(async (visitors: FastifyInstance) => {
    documentSecurity(visitors, () => [{}, { userKey: [] }]);
    visitors.addHook('onRequest', async (request) => {
      request.chatVisitor = { ...(await chat.scope(webhookIdOf(request))), key: userKeyOf(request) };
    });
    for (const url of ['/hello', '/hello/']) {
      visitors.get(
        url,
        {
          schema: {
            operationId: url === '/hello' ? 'helloNoSlash' : 'hello',
            tags,
            summary: 'Check that the channel answers',
            params: Params,
          },
        },
        async (_request, reply) => reply.type('text/plain').send('Hello from Parley chat'),
      );
    }
    routeOperations(visitors, CHAT_VISITOR_HANDLERS, visitorOf);
  });

  // End users: every route authenticates the user a key names.
  await app.register(async (users: FastifyInstance) => {
    documentSecurity(users, () => [{ userKey: [] }]);
    users.addHook('onRequest', async (request, reply) => {
      const scope = await chat.scope(webhookIdOf(request));
      const caller = await channelCaller(request, reply, chat, scope, userKeyOf(request));
      if ('turn' in caller) request.chatTurn = caller.turn;
      else request.chatSession = caller.session;
    });
    routeOperations(users, CHAT_USER_HANDLERS, sessionOf);
    routeOperations(users, CHAT_TURN_HANDLERS, turnOf, { queuesTurn: true });
    const listenOptions = (request: FastifyRequest) => ({
      log,
      listened: request.listened ?? unavailable('listened conversation'),
      userId: sessionOf(request).userId,
      pingIntervalMs,
      streams,
    });
    // The one route that upgrades: elsewhere an upgrade request is answered as plain HTTP.
    await users.register(async (listening: FastifyInstance) => {
      await listening.register(websocket, {
        // Listeners send nothing: a client's message is never more than a close frame's worth.
        options: { maxPayload: 1024 },
        // The hook above ends the open streams with a reason; the plugin's own would close them without.
        preClose: (done) => done(),
      });
      listening.withTypeProvider<TypeBoxTypeProvider>().route({
        method: 'GET',
        url: listenConversation.path,
        schema: {
          operationId: listenConversation.id,
          tags: [listenConversation.tag],
          summary: listenConversation.summary,
          ...(listenConversation.description !== undefined && {
            description: listenConversation.description,
          }),
          params: Type.Object({ webhookId: Type.String(), ...listenConversation.params.properties }),
          querystring: listenConversation.query,
        },
        // Before a WebSocket upgrade, so that a refused listener gets its status and error body.
        preHandler: async (request) => {
          request.listened = await chat.listenable(sessionOf(request), request.params.id);
        },
        handler: async (request, reply) => {
          await streamConversation(request, reply, listenOptions(request));
        },
        wsHandler: async (socket, request) => {
          await socketConversation(request, socket, listenOptions(request));
        },
      });
    });
  });
};
