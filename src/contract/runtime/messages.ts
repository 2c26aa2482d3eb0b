import { Type } from 'typebox';
import { ConversationSchema } from '../../domain/runtime/conversations.ts';
import {
  CreateMessageBodySchema,
  GetOrCreateMessageBodySchema,
  ImportMessagesBodySchema,
  InitializeIncomingMessageBodySchema,
  MessageSchema,
  UpdateMessageBodySchema,
} from '../../domain/runtime/messages.ts';
import { TagMap } from '../../domain/shared/schemas.ts';
import { UserSchema } from '../../domain/runtime/users.ts';
import { listOperation, operation } from './define.ts';
import { CreatedMeta, EmptySchema, IdParam } from '../schemas.ts';

const tag = 'Messages';
const MessageAnswer = Type.Object({ message: MessageSchema });

export const messageOperations = [
  operation({
    id: 'createMessage',
    method: 'POST',
    path: '/messages',
    access: 'write',
    tag,
    summary: 'Create a message',
    description:
      'From the bot (userId = the bot id): outgoing. From a user: incoming, and queued for the bot as a message_created event.',
    status: 201,
    body: CreateMessageBodySchema.properties,
    response: MessageAnswer,
    handler: async (d, actor, body) => ({ message: await d.messages.create(actor, body) }),
  }),
  operation({
    id: 'getOrCreateMessage',
    method: 'POST',
    path: '/messages/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a message',
    body: GetOrCreateMessageBodySchema.properties,
    response: Type.Object({ message: MessageSchema, meta: CreatedMeta }),
    handler: async (d, actor, body) => {
      const { message, created } = await d.messages.getOrCreate(actor, body);
      return { message, meta: { created } };
    },
  }),
  operation({
    id: 'getMessage',
    method: 'GET',
    path: '/messages/:id',
    access: 'read',
    tag,
    summary: 'Get a message',
    params: IdParam,
    response: MessageAnswer,
    handler: async (d, actor, { id }) => ({ message: await d.messages.get(actor, id) }),
  }),
  operation({
    id: 'updateMessage',
    method: 'PUT',
    path: '/messages/:id',
    access: 'write',
    tag,
    summary: 'Update a message',
    params: IdParam,
    body: UpdateMessageBodySchema.properties,
    response: MessageAnswer,
    handler: async (d, actor, { id, ...body }) => ({ message: await d.messages.update(actor, id, body) }),
  }),
  listOperation({
    id: 'listMessages',
    path: '/messages',
    tag,
    summary: 'List messages',
    description: 'Newest first.',
    query: {
      conversationId: Type.Optional(Type.String()),
      tags: Type.Optional(TagMap),
      afterDate: Type.Optional(Type.String({ format: 'date-time' })),
      beforeDate: Type.Optional(Type.String({ format: 'date-time' })),
    },
    key: 'messages',
    item: MessageSchema,
    handler: (d, actor, query) => d.messages.list(actor, query),
  }),
  operation({
    id: 'deleteMessage',
    method: 'DELETE',
    path: '/messages/:id',
    access: 'write',
    tag,
    summary: 'Delete a message',
    params: IdParam,
    response: EmptySchema,
    handler: async (d, actor, { id }) => {
      await d.messages.delete(actor, id);
      return {};
    },
  }),
  operation({
    id: 'initializeIncomingMessage',
    method: 'POST',
    path: '/initialize-incoming-message',
    access: 'write',
    tag,
    summary: 'Get or create the user, the conversation and the incoming message, at once',
    description:
      'Gets or creates the user, the conversation and (when given) the incoming message, in one transaction.',
    body: InitializeIncomingMessageBodySchema.properties,
    response: Type.Object({
      user: UserSchema,
      conversation: ConversationSchema,
      message: Type.Optional(MessageSchema),
    }),
    handler: (d, actor, body) => d.messages.initializeIncoming(actor, body),
  }),
  operation({
    id: 'importMessages',
    method: 'POST',
    path: '/messages/import-messages',
    access: 'write',
    tag,
    summary: 'Import message history',
    description:
      'The messages keep their createdAt, queue no event and reach no listener; all or none are imported.',
    body: ImportMessagesBodySchema.properties,
    response: Type.Object({ messages: Type.Array(MessageSchema) }),
    handler: async (d, actor, { messages }) => ({
      messages: await d.messages.importMessages(actor, messages),
    }),
  }),
];
