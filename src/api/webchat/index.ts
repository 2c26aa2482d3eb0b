import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  WEBCHAT_SITE_HANDLERS,
  WEBCHAT_TURN_HANDLERS,
  WEBCHAT_USER_HANDLERS,
  WEBCHAT_VISITOR_HANDLERS,
} from '../../handlers/webchat/index.ts';
import { HEADERS } from '../../contract/headers.ts';
import type { ChatKeySession, ChatSession } from '../../domain/chat/chat.ts';
import type { WebchatVisitor } from '../../domain/webchat/webchat.ts';
import { resumePoint } from '../chat/listen.ts';
import { channelCaller, channelRoutes, pathParam } from '../channel-routes.ts';
import { allowCors, BOT_CORS_SETTING } from '../cors.ts';
import { unavailable } from '../errors.ts';
import { openEventStream } from '../event-stream.ts';
import { headerValue } from '../headers.ts';
import { documentSecurity } from '../openapi-security.ts';
import { routeOperations } from '../operations.ts';
import { webchatConfiguration } from './configuration.ts';
import { followConversation } from './stream.ts';

declare module 'fastify' {
  interface FastifyRequest {
    webchatVisitor?: WebchatVisitor;
    webchatSession?: ChatSession;
    /** On a route that queues a turn, in place of `webchatSession`: see `channelCaller`. */
    webchatTurn?: ChatKeySession;
  }
}

export interface WebchatApiOptions {
  pingIntervalMs: number;
}

const tags = ['Webchat'];

const visitorOf = (r: FastifyRequest): WebchatVisitor => r.webchatVisitor ?? unavailable('webchat visitor');
const sessionOf = (r: FastifyRequest): ChatSession => r.webchatSession ?? unavailable('webchat session');
const turnOf = (r: FastifyRequest): ChatKeySession => r.webchatTurn ?? unavailable('webchat turn');
const clientIdOf = (r: FastifyRequest): string => pathParam(r, 'clientId');

/**
 * The webchat API of every bot's chat channel, under `/webchat/{clientId}` (the client id is the
 * channel's webhook id): what the official `@botpress/webchat` speaks with `apiUrl` `{base}/webchat`.
 * The records are the Chat API's. `/initialize` opens the user's conversation and streams it; the
 * other routes but the visitors' authenticate the user by `x-user-key`.
 */
export const webchatApi: FastifyPluginAsync<WebchatApiOptions> = async (app, { pingIntervalMs }) => {
  const { webchat, log } = app.domain;
  const streams = new Set<() => void>();
  const keepAlive = { intervalMs: pingIntervalMs, text: ': ping\n\n' };

  channelRoutes(app, 'webchat_');
  app.decorateRequest('webchatVisitor', undefined);
  app.decorateRequest('webchatSession', undefined);
  app.decorateRequest('webchatTurn', undefined);
  app.addHook('preClose', async () => {
    for (const close of [...streams]) close();
  });
  await allowCors(app, {
    setIn: BOT_CORS_SETTING,
    origins: async (request) => (await webchat.scope(clientIdOf(request))).channel.allowedOrigins ?? '*',
  });

  const reached = async (request: FastifyRequest): Promise<WebchatVisitor> => ({
    ...(await webchat.scope(clientIdOf(request))),
    key: headerValue(request.headers[HEADERS.userKey]),
    adminSecret: headerValue(request.headers[HEADERS.adminSecret]),
  });

  // A site's backend: the channel's admin secret.
  await app.register(async (sites: FastifyInstance) => {
    documentSecurity(sites, () => [{ adminSecret: [] }]);
    sites.addHook('onRequest', async (request) => {
      const visitor = await reached(request);
      webchat.requireAdminSecret(visitor);
      request.webchatVisitor = visitor;
    });
    routeOperations(sites, WEBCHAT_SITE_HANDLERS, visitorOf);
  });

  // Visitors: no user key needed (yet).
  await app.register(async (visitors: FastifyInstance) => {
    // No key needed; a key (a returning user) or the admin secret (a site's backend) when there is one.
    documentSecurity(visitors, () => [{}, { userKey: [] }, { adminSecret: [] }]);
    visitors.addHook('onRequest', async (request) => {
      request.webchatVisitor = await reached(request);
    });
    routeOperations(visitors, WEBCHAT_VISITOR_HANDLERS, visitorOf);

    visitors.withTypeProvider<TypeBoxTypeProvider>().get(
      '/initialize',
      {
        schema: {
          operationId: 'initialize',
          tags,
          summary: 'Open the user’s conversation and stream it (server-sent events)',
          description:
            'Without a valid `x-user-key`, creates a user (shared mode); without `conversationId` (or one that is not the user’s), a conversation. The first frame `init` carries the conversation, its newest messages (newest first), its participants and the user with its `userKey`; then the conversation’s signals follow.',
          params: Type.Object({ clientId: Type.String() }),
          querystring: Type.Object({
            conversationId: Type.Optional(Type.String()),
            userId: Type.Optional(Type.String()),
          }),
        },
      },
      async (request, reply) => {
        const opened = await webchat.initialize(visitorOf(request), request.query.conversationId);
        const stream = openEventStream(reply, { keepAlive, streams });
        stream.write(`data: ${JSON.stringify({ type: 'init', data: opened.init })}\n\n`);
        await followConversation(request, stream, {
          log,
          webchat,
          session: opened.session,
          runtimeConversationId: opened.runtimeConversationId,
          after: resumePoint(request) ?? opened.after,
        });
      },
    );

    visitors.withTypeProvider<TypeBoxTypeProvider>().get(
      '/config',
      {
        schema: {
          operationId: 'getConfiguration',
          tags,
          summary: 'The webchat’s look, from the bot’s configuration (for the embed script)',
          params: Type.Object({ clientId: Type.String() }),
        },
      },
      async (request) => webchatConfiguration(visitorOf(request), webchat.uploadsAvailable),
    );
  });

  // End users: every route authenticates the user a key names.
  await app.register(async (users: FastifyInstance) => {
    documentSecurity(users, () => [{ userKey: [] }]);
    users.addHook('onRequest', async (request, reply) => {
      const scope = await webchat.scope(clientIdOf(request));
      const key = headerValue(request.headers[HEADERS.userKey]);
      const caller = await channelCaller(request, reply, webchat, scope, key);
      if ('turn' in caller) request.webchatTurn = caller.turn;
      else request.webchatSession = caller.session;
    });
    routeOperations(users, WEBCHAT_USER_HANDLERS, sessionOf);
    routeOperations(users, WEBCHAT_TURN_HANDLERS, turnOf, { queuesTurn: true });
    users.withTypeProvider<TypeBoxTypeProvider>().get(
      '/conversations/:id/listen',
      {
        schema: {
          operationId: 'listenConversation',
          tags,
          summary: 'Listen to a conversation (server-sent events)',
          description:
            'The webchat’s signals: `message_created`, `message_status_changed`, `participant_added`, `participant_removed`, `custom`, numbered by `id:`; `: ping` comments keep it open.',
          params: Type.Object({ clientId: Type.String(), id: Type.String() }),
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        const { conversationId: runtimeConversationId, position } = await webchat.listenable(
          session,
          request.params.id,
        );
        const stream = openEventStream(reply, { keepAlive, streams });
        await followConversation(request, stream, {
          log,
          webchat,
          session,
          runtimeConversationId,
          after: resumePoint(request) ?? position,
        });
      },
    );
  });
};
