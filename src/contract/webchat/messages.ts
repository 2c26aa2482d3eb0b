import { Type } from 'typebox';
import { JsonObject } from '../../domain/shared/schemas.ts';
import {
  CreateFileBodySchema,
  FeedbackSchema,
  WEBCHAT_EVENT_TYPES,
  WebchatEventSchema,
  WebchatFileSchema,
  WebchatPayloadSchema,
} from '../../domain/webchat/models.ts';
import { EmptySchema } from '../schemas.ts';
import { deleteMessage } from '../chat/shared.ts';
import { tag } from './tag.ts';
import { Model } from '../models.ts';
import { operation } from '../operation.ts';

const MessageAnswer = Type.Object({ message: Model.WebchatMessage });
const EventAnswer = Type.Object({ event: WebchatEventSchema });
const IdParams = { id: Type.String() };

export const webchatMessageOperations = [
  operation({
    id: 'getMessage',
    method: 'GET',
    path: '/messages/:id',
    access: 'read',
    tag,
    summary: 'Get a message',
    params: IdParams,
    response: MessageAnswer,
  }),
  operation({
    id: 'updateMessage',
    method: 'PUT',
    path: '/messages/:id',
    access: 'write',
    tag,
    summary: 'Change a message the user sent',
    params: IdParams,
    body: { payload: WebchatPayloadSchema, metadata: Type.Optional(JsonObject) },
    response: MessageAnswer,
  }),
  deleteMessage(tag),
  operation({
    id: 'addMessageFeedback',
    method: 'PUT',
    path: '/messages/:id/feedback',
    access: 'write',
    tag,
    summary: 'Give feedback on a message',
    description:
      'Kept as the message’s tags `webchat:feedback` (`positive` or `negative`) and `webchat:feedbackComment`, which the Runtime API shows.',
    params: IdParams,
    body: FeedbackSchema.properties,
    response: EmptySchema,
  }),
  operation({
    id: 'removeMessageFeedback',
    method: 'DELETE',
    path: '/messages/:id/feedback',
    access: 'write',
    tag,
    summary: 'Remove the feedback on a message',
    params: IdParams,
    response: EmptySchema,
  }),
  operation({
    id: 'createEvent',
    method: 'POST',
    path: '/events',
    access: 'write',
    tag,
    summary: 'Send an event: the conversation started, or a custom event of the page',
    description:
      '`conversation_started` gives the bot a `webchat:conversationStarted` event once per conversation and answers `data.status.isInitial`; `custom` reaches the bot as the Chat API’s custom event (`chat:custom`).',
    status: 201,
    body: {
      conversationId: Type.String(),
      payload: Type.Object({ type: Type.Enum(WEBCHAT_EVENT_TYPES), data: JsonObject }),
      bindConversation: Type.Optional(Type.Boolean()),
      bindUser: Type.Optional(Type.Boolean()),
    },
    response: EventAnswer,
  }),
  operation({
    id: 'getEvent',
    method: 'GET',
    path: '/events/:id',
    access: 'read',
    tag,
    summary: 'Get an event',
    params: IdParams,
    response: EventAnswer,
  }),
  operation({
    id: 'createFile',
    method: 'POST',
    path: '/files',
    access: 'write',
    tag,
    summary: 'Create a file to upload into the conversation',
    description: 'Answers the file with its `uploadUrl` (PUT the bytes there) and its public `url`.',
    status: 201,
    body: CreateFileBodySchema.properties,
    response: Type.Object({ file: WebchatFileSchema }),
  }),
] as const;

/** The operations that queue a turn of the bot: their callers' keys are verified, their users read with the turn (`Chat.admit`). */
export const webchatTurnOperations = [
  operation({
    id: 'createMessage',
    method: 'POST',
    path: '/messages',
    access: 'write',
    tag,
    summary: 'Send a message',
    description:
      'The message reaches the bot as a Chat API message would. `metadata` comes back on the message and its `message_created` signal (the webchat matches its `clientMessageId`).',
    status: 201,
    body: {
      payload: WebchatPayloadSchema,
      conversationId: Type.String(),
      metadata: Type.Optional(JsonObject),
      replyTo: Type.Optional(Type.String({ description: 'Accepted and not kept' })),
    },
    response: MessageAnswer,
  }),
] as const;
