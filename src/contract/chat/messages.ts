import { Type } from 'typebox';
import { ChatPayloadSchema } from '../../domain/chat/payloads.ts';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { tag } from './tag.ts';
import { deleteMessage } from './shared.ts';
import { Model } from '../models.ts';
import { listOperation, operation } from '../operation.ts';

const MessageAnswer = Type.Object({ message: Model.ChatMessage });
const EventAnswer = Type.Object({ event: Model.ChatEvent });

export const chatMessageOperations = [
  operation({
    id: 'getMessage',
    method: 'GET',
    path: '/messages/:id',
    access: 'read',
    tag,
    summary: 'Get a message',
    params: { id: Type.String() },
    response: MessageAnswer,
  }),
  deleteMessage(tag),
  listOperation({
    id: 'listMessages',
    path: '/conversations/:conversationId/messages',
    tag,
    summary: 'List the messages of a conversation',
    pageSize: false,
    params: { conversationId: Type.String() },
    key: 'messages',
    item: Model.ChatMessage,
  }),
  operation({
    id: 'getEvent',
    method: 'GET',
    path: '/events/:id',
    access: 'read',
    tag,
    summary: 'Get an event',
    params: { id: Type.String() },
    response: EventAnswer,
  }),
] as const;

/** The operations that queue a turn of the bot: their callers' keys are verified, their users read with the turn (`Chat.admit`). */
export const chatTurnOperations = [
  operation({
    id: 'createMessage',
    method: 'POST',
    path: '/messages',
    access: 'write',
    tag,
    summary: 'Send a message',
    status: 201,
    body: { payload: ChatPayloadSchema, conversationId: Type.String(), metadata: Type.Optional(JsonObject) },
    response: MessageAnswer,
  }),
  operation({
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
  }),
] as const;
