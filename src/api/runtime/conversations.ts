import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ConversationSchema,
  CreateConversationBodySchema,
  GetOrCreateConversationBodySchema,
  UpdateConversationBodySchema,
} from '../../domain/conversations.ts';
import { TagMap } from '../../domain/schemas.ts';
import { UserSchema } from '../../domain/users.ts';
import { botActorOf } from '../auth.ts';
import {
  CreatedMeta,
  EmptySchema,
  errorResponses,
  IdParams,
  listOf,
  PageQuery,
  SortQuery,
} from '../common.ts';
import { headerValue, HEADERS } from '../headers.ts';

const tags = ['Conversations'];
const ConversationResponse = Type.Object({ conversation: ConversationSchema });
const ParticipantParams = Type.Object({ id: Type.String(), userId: Type.String() });

export const conversationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { conversations } = app.domain;

  app.post(
    '/conversations',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'createConversation',
        tags,
        body: CreateConversationBodySchema,
        response: { 201: ConversationResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const integration = headerValue(request.headers[HEADERS.integrationAlias]);
      const conversation = await conversations.create(botActorOf(request), request.body, integration);
      return reply.code(201).send({ conversation });
    },
  );

  app.get(
    '/conversations/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getConversation',
        tags,
        params: IdParams,
        response: { 200: ConversationResponse, ...errorResponses },
      },
    },
    async (request) => ({ conversation: await conversations.get(botActorOf(request), request.params.id) }),
  );

  app.get(
    '/conversations',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listConversations',
        tags,
        description: 'Most recent first unless sorted otherwise.',
        querystring: Type.Object({
          ...PageQuery,
          ...SortQuery,
          tags: Type.Optional(TagMap),
          participantIds: Type.Optional(Type.Array(Type.String())),
          integrationName: Type.Optional(Type.String()),
          channel: Type.Optional(Type.String()),
          afterDate: Type.Optional(Type.String({ format: 'date-time' })),
          beforeDate: Type.Optional(Type.String({ format: 'date-time' })),
          minMessageCount: Type.Optional(Type.Integer({ minimum: 0 })),
          maxMessageCount: Type.Optional(Type.Integer({ minimum: 0 })),
        }),
        response: { 200: listOf('conversations', ConversationSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await conversations.list(botActorOf(request), request.query);
      return { conversations: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.post(
    '/conversations/get-or-create',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getOrCreateConversation',
        tags,
        body: GetOrCreateConversationBodySchema,
        response: {
          200: Type.Object({ conversation: ConversationSchema, meta: CreatedMeta }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const integration = headerValue(request.headers[HEADERS.integrationAlias]);
      const { conversation, created } = await conversations.getOrCreate(
        botActorOf(request),
        request.body,
        integration,
      );
      return { conversation, meta: { created } };
    },
  );

  app.put(
    '/conversations/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'updateConversation',
        tags,
        params: IdParams,
        body: UpdateConversationBodySchema,
        response: { 200: ConversationResponse, ...errorResponses },
      },
    },
    async (request) => ({
      conversation: await conversations.update(botActorOf(request), request.params.id, request.body),
    }),
  );

  app.delete(
    '/conversations/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'deleteConversation',
        tags,
        description: 'Deletes the conversation with its messages, events, participants and states.',
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await conversations.delete(botActorOf(request), request.params.id);
      return {};
    },
  );

  app.get(
    '/conversations/:id/participants',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listParticipants',
        tags,
        params: IdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: listOf('participants', UserSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await conversations.listParticipants(
        botActorOf(request),
        request.params.id,
        request.query,
      );
      return { participants: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.post(
    '/conversations/:id/participants',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'addParticipant',
        tags,
        params: IdParams,
        body: Type.Object({ userId: Type.String() }),
        response: { 200: Type.Object({ participant: UserSchema }), ...errorResponses },
      },
    },
    async (request) => ({
      participant: await conversations.addParticipant(
        botActorOf(request),
        request.params.id,
        request.body.userId,
      ),
    }),
  );

  app.get(
    '/conversations/:id/participants/:userId',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getParticipant',
        tags,
        params: ParticipantParams,
        response: { 200: Type.Object({ participant: UserSchema }), ...errorResponses },
      },
    },
    async (request) => ({
      participant: await conversations.getParticipant(
        botActorOf(request),
        request.params.id,
        request.params.userId,
      ),
    }),
  );

  app.delete(
    '/conversations/:id/participants/:userId',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'removeParticipant',
        tags,
        params: ParticipantParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await conversations.removeParticipant(botActorOf(request), request.params.id, request.params.userId);
      return {};
    },
  );
};
