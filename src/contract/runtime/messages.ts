import { Type } from 'typebox';
import { TagMap } from '../../domain/shared/schemas.ts';
import { CreatedMeta, EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  CreateMessageBodySchema,
  GetOrCreateMessageBodySchema,
  ImportMessagesBodySchema,
  InitializeIncomingMessageBodySchema,
  UpdateMessageBodySchema,
} from '../../domain/runtime/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Messages';
const MessageAnswer = Type.Object({ message: Model.Message });

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
  }),
  operation({
    id: 'getOrCreateMessage',
    method: 'POST',
    path: '/messages/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a message',
    body: GetOrCreateMessageBodySchema.properties,
    response: Type.Object({ message: Model.Message, meta: CreatedMeta }),
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
    item: Model.Message,
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
      user: Model.User,
      conversation: Model.Conversation,
      message: Type.Optional(Model.Message),
    }),
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
    response: Type.Object({ messages: Type.Array(Model.Message) }),
  }),
] as const;
