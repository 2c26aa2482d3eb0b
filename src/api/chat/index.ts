import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CHAT_USER_OPERATIONS, CHAT_VISITOR_OPERATIONS } from '../../contract/chat/index.ts';
import type { ChatSession, ChatVisitor } from '../../domain/chat/chat.ts';
import { channelRoutes, pathParam, unavailable } from '../channel-routes.ts';
import { allowCors } from '../cors.ts';
import { userKeyOf } from '../headers.ts';
import { documentSecurity } from '../openapi-security.ts';
import { routeOperations } from '../operations.ts';
import { streamConversation } from './listen.ts';

declare module 'fastify' {
  interface FastifyRequest {
    chatVisitor?: ChatVisitor;
    chatSession?: ChatSession;
  }
}

export interface ChatApiOptions {
  pingIntervalMs: number;
}

const tags = ['Chat'];
const Params = Type.Object({ webhookId: Type.String() });

const visitorOf = (r: FastifyRequest): ChatVisitor => r.chatVisitor ?? unavailable('chat visitor');
const sessionOf = (r: FastifyRequest): ChatSession => r.chatSession ?? unavailable('chat session');
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
  // Open event streams would keep the server from closing: end them first.
  app.addHook('preClose', async () => {
    for (const close of [...streams]) close();
  });
  // Browsers may call a channel from the origins its bot allows (any, unless configured).
  await allowCors(app, {
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
            hide: url === '/hello',
            params: Params,
          },
        },
        async (_request, reply) => reply.type('text/plain').send('Hello from Parley chat'),
      );
    }
    routeOperations(visitors, CHAT_VISITOR_OPERATIONS, visitorOf);
  });

  // End users: every route authenticates the user a key names.
  await app.register(async (users: FastifyInstance) => {
    documentSecurity(users, () => [{ userKey: [] }]);
    users.addHook('onRequest', async (request) => {
      request.chatSession = await chat.authenticate(
        await chat.scope(webhookIdOf(request)),
        userKeyOf(request),
      );
    });
    routeOperations(users, CHAT_USER_OPERATIONS, sessionOf);
    users.withTypeProvider<TypeBoxTypeProvider>().get(
      '/conversations/:id/listen',
      {
        schema: {
          operationId: 'listenConversation',
          tags,
          summary: 'Listen to a conversation (server-sent events)',
          description:
            'Server-sent events: `data: {"type","data"}` frames numbered by `id:`, and `data: ping`. Reconnect with `Last-Event-ID` to receive what was missed.',
          params: Type.Object({ webhookId: Type.String(), id: Type.String() }),
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        const conversationId = await chat.listenable(session, request.params.id);
        await streamConversation(request, reply, {
          log,
          conversationId,
          userId: session.userId,
          pingIntervalMs,
          streams,
        });
      },
    );
  });
};
