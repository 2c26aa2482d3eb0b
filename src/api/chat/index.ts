import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import {
  ChatConversationSchema,
  ChatEventSchema,
  ChatMessageSchema,
  ChatUserFieldsSchema,
  ChatUserSchema,
} from '../../domain/chat.ts';
import type { Chat, ChatScope, ChatSession } from '../../domain/chat.ts';
import { ChatPayloadSchema } from '../../domain/chat-payloads.ts';
import { ApiError } from '../../domain/errors.ts';
import { JsonObject } from '../../domain/schemas.ts';
import { EmptySchema, errorResponses, listOf } from '../common.ts';
import { headerValue, HEADERS } from '../headers.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { streamConversation } from './listen.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Chat API routes: `user` needs a valid `x-user-key` of an existing user; `channel` only the webhook id. */
    chat?: 'channel' | 'user';
  }
  interface FastifyRequest {
    chatScope?: ChatScope;
    chatSession?: ChatSession;
  }
}

export interface ChatApiOptions {
  chat: Chat;
  pingIntervalMs: number;
}

const tags = ['Chat'];
const Params = Type.Object({ webhookId: Type.String() });
const ConversationParams = Type.Object({ webhookId: Type.String(), id: Type.String() });
const ConversationIdParams = Type.Object({ webhookId: Type.String(), conversationId: Type.String() });
const ParticipantParams = Type.Object({
  webhookId: Type.String(),
  conversationId: Type.String(),
  userId: Type.String(),
});
const TokenQuery = Type.Object({ nextToken: Type.Optional(Type.String()) });
const ForeignId = Type.String({ minLength: 1, maxLength: 70 });

const internal = (what: string): never => {
  throw new ApiError('Internal', `${what} is not available on this route`);
};
const scopeOf = (r: FastifyRequest): ChatScope => r.chatScope ?? internal('chat scope');
const sessionOf = (r: FastifyRequest): ChatSession => r.chatSession ?? internal('chat session');
const keyOf = (r: FastifyRequest) => headerValue(r.headers[HEADERS.userKey]);

/**
 * The Chat API of every bot's chat channel, under `/chat/{webhookId}`: what `@botpress/chat` calls.
 * End users are identified by `x-user-key`; they see the conversations they take part in.
 */
export const chatApi: FastifyPluginAsyncTypebox<ChatApiOptions> = async (app, { chat, pingIntervalMs }) => {
  const { log } = app.domain;
  const streams = new Set<() => void>();

  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.chat;
    // Chat operations share names with the Runtime API's: keep OpenAPI operation ids unique.
    const schema = route.schema as { operationId?: string } | undefined;
    if (schema?.operationId) schema.operationId = `chat_${schema.operationId}`;
  });
  app.decorateRequest('chatScope', undefined);
  app.decorateRequest('chatSession', undefined);
  app.addHook('onRequest', async (request) => {
    const mode = request.routeOptions.config.chat;
    if (!mode) return;
    const scope = await chat.scope((request.params as { webhookId: string }).webhookId);
    request.chatScope = scope;
    if (mode === 'user') request.chatSession = await chat.authenticate(scope, keyOf(request));
  });
  // Open event streams would keep the server from closing: end them first.
  app.addHook('preClose', async () => {
    for (const close of [...streams]) close();
  });

  for (const url of ['/hello', '/hello/']) {
    app.get(
      url,
      {
        config: { chat: 'channel' },
        schema: {
          operationId: url === '/hello' ? 'helloNoSlash' : 'hello',
          tags,
          hide: url === '/hello',
          params: Params,
        },
      },
      async (_request, reply) => reply.type('text/plain').send('Hello from Parley chat'),
    );
  }

  app.post(
    '/users',
    {
      config: { chat: 'channel' },
      schema: {
        operationId: 'createUser',
        tags,
        description: 'Shared mode only: the server signs and returns the new user’s key.',
        params: Params,
        body: Type.Object({ ...ChatUserFieldsSchema.properties, id: Type.Optional(ForeignId) }),
        response: { 201: Type.Object({ user: ChatUserSchema, key: Type.String() }), ...errorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await chat.createUser(scopeOf(request), request.body)),
  );

  app.post(
    '/users/get-or-create',
    {
      config: { chat: 'channel' },
      schema: {
        operationId: 'getOrCreateUser',
        tags,
        params: Params,
        body: Type.Optional(ChatUserFieldsSchema),
        response: { 201: Type.Object({ user: ChatUserSchema }), ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ user: await chat.getOrCreateUser(scopeOf(request), keyOf(request), request.body ?? {}) }),
  );

  app.get(
    '/users/me',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'getUser',
        tags,
        params: Params,
        response: { 200: Type.Object({ user: ChatUserSchema }), ...errorResponses },
      },
    },
    async (request) => ({ user: await chat.getUser(sessionOf(request)) }),
  );

  app.put(
    '/users/me',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'updateUser',
        tags,
        params: Params,
        body: ChatUserFieldsSchema,
        response: { 200: Type.Object({ user: ChatUserSchema }), ...errorResponses },
      },
    },
    async (request) => ({ user: await chat.updateUser(sessionOf(request), request.body) }),
  );

  app.delete(
    '/users/me',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'deleteUser',
        tags,
        params: Params,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await chat.deleteUser(sessionOf(request));
      return {};
    },
  );

  app.post(
    '/conversations',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'createConversation',
        tags,
        params: Params,
        body: Type.Optional(Type.Object({ id: Type.Optional(ForeignId) })),
        response: { 201: Type.Object({ conversation: ChatConversationSchema }), ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ conversation: await chat.createConversation(sessionOf(request), request.body?.id) }),
  );

  app.post(
    '/conversations/get-or-create',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'getOrCreateConversation',
        tags,
        params: Params,
        body: Type.Object({ id: ForeignId }),
        response: { 201: Type.Object({ conversation: ChatConversationSchema }), ...errorResponses },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ conversation: await chat.getOrCreateConversation(sessionOf(request), request.body.id) }),
  );

  app.get(
    '/conversations/:id',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'getConversation',
        tags,
        params: ConversationParams,
        response: { 200: Type.Object({ conversation: ChatConversationSchema }), ...errorResponses },
      },
    },
    async (request) => ({ conversation: await chat.getConversation(sessionOf(request), request.params.id) }),
  );

  app.delete(
    '/conversations/:id',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'deleteConversation',
        tags,
        params: ConversationParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await chat.deleteConversation(sessionOf(request), request.params.id);
      return {};
    },
  );

  app.get(
    '/conversations',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'listConversations',
        tags,
        description: 'The conversations the user owns, most recent first.',
        params: Params,
        querystring: TokenQuery,
        response: { 200: listOf('conversations', ChatConversationSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await chat.listConversations(sessionOf(request), request.query);
      return { conversations: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.get(
    '/conversations/:id/listen',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'listenConversation',
        tags,
        description:
          'Server-sent events: `data: {"type","data"}` frames numbered by `id:`, and `data: ping`. Reconnect with `Last-Event-ID` to receive what was missed.',
        params: ConversationParams,
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

  app.get(
    '/conversations/:conversationId/messages',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'listMessages',
        tags,
        params: ConversationIdParams,
        querystring: TokenQuery,
        response: { 200: listOf('messages', ChatMessageSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await chat.listMessages(sessionOf(request), request.params.conversationId, request.query);
      return { messages: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.post(
    '/conversations/:conversationId/participants',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'addParticipant',
        tags,
        params: ConversationIdParams,
        body: Type.Object({ userId: Type.String() }),
        response: { 200: Type.Object({ participant: ChatUserSchema }), ...errorResponses },
      },
    },
    async (request) => ({
      participant: await chat.addParticipant(
        sessionOf(request),
        request.params.conversationId,
        request.body.userId,
      ),
    }),
  );

  app.get(
    '/conversations/:conversationId/participants/:userId',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'getParticipant',
        tags,
        params: ParticipantParams,
        response: { 200: Type.Object({ participant: ChatUserSchema }), ...errorResponses },
      },
    },
    async (request) => ({
      participant: await chat.getParticipant(
        sessionOf(request),
        request.params.conversationId,
        request.params.userId,
      ),
    }),
  );

  app.delete(
    '/conversations/:conversationId/participants/:userId',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'removeParticipant',
        tags,
        params: ParticipantParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await chat.removeParticipant(sessionOf(request), request.params.conversationId, request.params.userId);
      return {};
    },
  );

  app.get(
    '/conversations/:conversationId/participants',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'listParticipants',
        tags,
        params: ConversationIdParams,
        querystring: TokenQuery,
        response: { 200: listOf('participants', ChatUserSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await chat.listParticipants(
        sessionOf(request),
        request.params.conversationId,
        request.query,
      );
      return { participants: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.post(
    '/messages',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'createMessage',
        tags,
        params: Params,
        body: Type.Object({
          payload: ChatPayloadSchema,
          conversationId: Type.String(),
          metadata: Type.Optional(JsonObject),
        }),
        response: { 201: Type.Object({ message: ChatMessageSchema }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { payload, conversationId, metadata } = request.body;
      const message = await chat.createMessage(sessionOf(request), conversationId, payload, metadata);
      return reply.code(201).send({ message });
    },
  );

  app.get(
    '/messages/:id',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'getMessage',
        tags,
        params: ConversationParams,
        response: { 200: Type.Object({ message: ChatMessageSchema }), ...errorResponses },
      },
    },
    async (request) => ({ message: await chat.getMessage(sessionOf(request), request.params.id) }),
  );

  app.delete(
    '/messages/:id',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'deleteMessage',
        tags,
        params: ConversationParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await chat.deleteMessage(sessionOf(request), request.params.id);
      return {};
    },
  );

  app.post(
    '/events',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'createEvent',
        tags,
        description: 'A custom event for the bot (`chat:custom`), shown to the conversation’s listeners.',
        params: Params,
        body: Type.Object({ payload: JsonObject, conversationId: Type.String() }),
        response: { 201: Type.Object({ event: ChatEventSchema }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const event = await chat.createEvent(
        sessionOf(request),
        request.body.conversationId,
        request.body.payload,
      );
      return reply.code(201).send({ event });
    },
  );

  app.get(
    '/events/:id',
    {
      config: { chat: 'user' },
      schema: {
        operationId: 'getEvent',
        tags,
        params: ConversationParams,
        response: { 200: Type.Object({ event: ChatEventSchema }), ...errorResponses },
      },
    },
    async (request) => ({ event: await chat.getEvent(sessionOf(request), request.params.id) }),
  );
};
