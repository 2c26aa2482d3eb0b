import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ConversationSchema, CreateConversationBodySchema } from '../../domain/conversations.ts';
import {
  CreateMessageBodySchema,
  GetOrCreateMessageBodySchema,
  MessageSchema,
  UpdateMessageBodySchema,
} from '../../domain/messages.ts';
import { JsonObject, TagMap, Timestamp } from '../../domain/schemas.ts';
import { CreateUserBodySchema, UserSchema } from '../../domain/users.ts';
import { botActorOf } from '../auth.ts';
import { CreatedMeta, EmptySchema, errorResponses, IdParams, listOf, PageQuery } from '../common.ts';
import { headerValue, HEADERS } from '../headers.ts';

const tags = ['Messages'];
const MessageResponse = Type.Object({ message: MessageSchema });
const Discriminate = { discriminateByTags: Type.Optional(Type.Array(Type.String())) };

export const messageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { messages, users, conversations } = app.domain;

  app.post(
    '/messages',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'createMessage',
        tags,
        description:
          'From the bot (userId = the bot id): outgoing. From a user: incoming, and queued for the bot as a message_created event.',
        body: CreateMessageBodySchema,
        response: { 201: MessageResponse, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ message: await messages.create(botActorOf(request), request.body) }),
  );

  app.post(
    '/messages/get-or-create',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getOrCreateMessage',
        tags,
        body: GetOrCreateMessageBodySchema,
        response: { 200: Type.Object({ message: MessageSchema, meta: CreatedMeta }), ...errorResponses },
      },
    },
    async (request) => {
      const { message, created } = await messages.getOrCreate(botActorOf(request), request.body);
      return { message, meta: { created } };
    },
  );

  app.get(
    '/messages/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getMessage',
        tags,
        params: IdParams,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ message: await messages.get(botActorOf(request), request.params.id) }),
  );

  app.put(
    '/messages/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'updateMessage',
        tags,
        params: IdParams,
        body: UpdateMessageBodySchema,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({
      message: await messages.update(botActorOf(request), request.params.id, request.body),
    }),
  );

  app.get(
    '/messages',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listMessages',
        tags,
        description: 'Newest first.',
        querystring: Type.Object({
          ...PageQuery,
          conversationId: Type.Optional(Type.String()),
          tags: Type.Optional(TagMap),
          afterDate: Type.Optional(Type.String({ format: 'date-time' })),
          beforeDate: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: { 200: listOf('messages', MessageSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await messages.list(botActorOf(request), request.query);
      return { messages: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.delete(
    '/messages/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'deleteMessage',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await messages.delete(botActorOf(request), request.params.id);
      return {};
    },
  );

  app.post(
    '/initialize-incoming-message',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'initializeIncomingMessage',
        tags,
        description:
          'Gets or creates the user, the conversation and (when given) the incoming message, in one call.',
        body: Type.Object({
          userId: Type.Optional(Type.String()),
          user: Type.Optional(
            Type.Object({ ...CreateUserBodySchema.properties, tags: TagMap, ...Discriminate }),
          ),
          conversationId: Type.Optional(Type.String()),
          conversation: Type.Optional(
            Type.Object({ ...CreateConversationBodySchema.properties, tags: TagMap, ...Discriminate }),
          ),
          message: Type.Optional(
            Type.Object({
              payload: JsonObject,
              type: Type.String({ minLength: 1, maxLength: 200 }),
              tags: TagMap,
              origin: Type.Optional(Type.Literal('synthetic')),
              ...Discriminate,
            }),
          ),
        }),
        response: {
          200: Type.Object({
            user: UserSchema,
            conversation: ConversationSchema,
            message: Type.Optional(MessageSchema),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const actor = botActorOf(request);
      const body = request.body;
      const integration = headerValue(request.headers[HEADERS.integrationAlias]);
      const user = body.userId
        ? await users.get(actor, body.userId)
        : (await users.getOrCreate(actor, body.user ?? { tags: {} })).user;
      const conversation = body.conversationId
        ? await conversations.get(actor, body.conversationId)
        : (
            await conversations.getOrCreate(
              actor,
              body.conversation ?? { channel: 'channel', tags: {} },
              integration,
            )
          ).conversation;
      if (!body.message) return { user, conversation };
      const { message } = await messages.getOrCreate(actor, {
        ...body.message,
        userId: user.id,
        conversationId: conversation.id,
      });
      return { user, conversation, message };
    },
  );

  app.post(
    '/messages/import-messages',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'importMessages',
        tags,
        description:
          'Imports history: the messages keep their createdAt, queue no event and reach no listener.',
        body: Type.Object({
          messages: Type.Array(
            Type.Object({
              payload: JsonObject,
              userId: Type.String(),
              conversationId: Type.String(),
              type: Type.String({ minLength: 1, maxLength: 200 }),
              tags: Type.Optional(TagMap),
              createdAt: Timestamp,
              ...Discriminate,
            }),
            { maxItems: 1000 },
          ),
        }),
        response: { 200: Type.Object({ messages: Type.Array(MessageSchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const actor = botActorOf(request);
      const imported = [];
      for (const m of request.body.messages) {
        // Imported history keeps its dates, queues nothing and reaches no listener; importing it again
        // with discriminating tags finds the messages already there.
        const options = { createdAt: new Date(m.createdAt).toISOString(), silent: true };
        imported.push((await messages.getOrCreate(actor, m, options)).message);
      }
      return { messages: imported };
    },
  );
};
