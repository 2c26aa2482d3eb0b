import { Type } from 'typebox';
import { ChatEventSchema, ChatMessageSchema } from '../../domain/chat/chat.ts';
import { ChatPayloadSchema } from '../../domain/chat/payloads.ts';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { tag, user } from './define.ts';

const MessageAnswer = Type.Object({ message: ChatMessageSchema });
const EventAnswer = Type.Object({ event: ChatEventSchema });

export const chatMessageOperations = [
  user.operation({
    id: 'createMessage',
    method: 'POST',
    path: '/messages',
    access: 'write',
    tag,
    summary: 'Send a message',
    status: 201,
    body: { payload: ChatPayloadSchema, conversationId: Type.String(), metadata: Type.Optional(JsonObject) },
    response: MessageAnswer,
    handler: async (d, session, { payload, conversationId, metadata }) => ({
      message: await d.chat.createMessage(session, conversationId, payload, metadata),
    }),
  }),
  user.operation({
    id: 'getMessage',
    method: 'GET',
    path: '/messages/:id',
    access: 'read',
    tag,
    summary: 'Get a message',
    params: { id: Type.String() },
    response: MessageAnswer,
    handler: async (d, session, { id }) => ({ message: await d.chat.getMessage(session, id) }),
  }),
  user.operation({
    id: 'deleteMessage',
    method: 'DELETE',
    path: '/messages/:id',
    access: 'write',
    tag,
    summary: 'Delete a message the user sent',
    params: { id: Type.String() },
    response: EmptySchema,
    handler: async (d, session, { id }) => {
      await d.chat.deleteMessage(session, id);
      return {};
    },
  }),
  user.listOperation({
    id: 'listMessages',
    path: '/conversations/:conversationId/messages',
    tag,
    summary: 'List the messages of a conversation',
    pageSize: false,
    params: { conversationId: Type.String() },
    key: 'messages',
    item: ChatMessageSchema,
    handler: (d, session, { conversationId, ...page }) => d.chat.listMessages(session, conversationId, page),
  }),
  user.operation({
    id: 'createEvent',
    method: 'POST',
    path: '/events',
    access: 'write',
    tag,
    summary: 'Send a custom event to the bot',
    description: 'A custom event for the bot (`chat:custom`), shown to the conversation’s listeners.',
    status: 201,
    body: { payload: JsonObject, conversationId: Type.String() },
    response: EventAnswer,
    handler: async (d, session, { payload, conversationId }) => ({
      event: await d.chat.createEvent(session, conversationId, payload),
    }),
  }),
  user.operation({
    id: 'getEvent',
    method: 'GET',
    path: '/events/:id',
    access: 'read',
    tag,
    summary: 'Get an event',
    params: { id: Type.String() },
    response: EventAnswer,
    handler: async (d, session, { id }) => ({ event: await d.chat.getEvent(session, id) }),
  }),
];
