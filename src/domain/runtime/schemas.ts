import { Type } from 'typebox';
import type { Static } from 'typebox';
import { DurationMs, JsonObject, TagChangeMap, TagMap, Timestamp } from '../shared/schemas.ts';
import { EVENT_STATUSES, MESSAGE_DIRECTIONS, STATE_TYPES, WORKFLOW_STATUSES } from '../../value-sets.ts';

// The Runtime API's records as it answers them (users, conversations, messages, events, states,
// workflows) and the bodies that create and change them: a module without the store, so the contract
// declares the Runtime API with them.

export const UserSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  tags: TagMap,
  name: Type.Optional(Type.String()),
  pictureUrl: Type.Optional(Type.String()),
  properties: Type.Optional(TagMap),
  attributes: Type.Optional(TagMap),
});
export type User = Static<typeof UserSchema>;

/** A user's name and picture, whichever API sets them (the Chat and webchat APIs' users are these). */
export const UserName = Type.String({ maxLength: 200 });

export const UserPictureUrl = Type.String({ maxLength: 40000 });

export const CreateUserBodySchema = Type.Object({
  tags: Type.Optional(TagMap),
  integrationName: Type.Optional(Type.String()),
  name: Type.Optional(UserName),
  pictureUrl: Type.Optional(UserPictureUrl),
  properties: Type.Optional(TagMap),
  attributes: Type.Optional(TagMap),
});
export type CreateUserBody = Static<typeof CreateUserBodySchema>;

export const GetOrCreateUserBodySchema = Type.Object({
  tags: Type.Optional(TagChangeMap),
  integrationName: Type.Optional(Type.String()),
  name: Type.Optional(UserName),
  pictureUrl: Type.Optional(UserPictureUrl),
  properties: Type.Optional(TagChangeMap),
  attributes: Type.Optional(TagChangeMap),
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
});
export type GetOrCreateUserBody = Static<typeof GetOrCreateUserBodySchema>;

export const UpdateUserBodySchema = Type.Object({
  tags: Type.Optional(TagChangeMap),
  name: Type.Optional(Type.Union([UserName, Type.Null()])),
  pictureUrl: Type.Optional(Type.Union([UserPictureUrl, Type.Null()])),
  properties: Type.Optional(TagChangeMap),
  attributes: Type.Optional(TagChangeMap),
});
export type UpdateUserBody = Static<typeof UpdateUserBodySchema>;

export const ConversationSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  channel: Type.String(),
  integration: Type.String(),
  tags: TagMap,
  messageCount: Type.Integer(),
  currentTaskId: Type.Optional(Type.String()),
  currentWorkflowId: Type.Optional(Type.String()),
  properties: Type.Optional(TagMap),
});
export type Conversation = Static<typeof ConversationSchema>;

export const CreateConversationBodySchema = Type.Object({
  channel: Type.String({ minLength: 1, maxLength: 200 }),
  tags: Type.Optional(TagMap),
  integrationName: Type.Optional(Type.String({ maxLength: 200 })),
  properties: Type.Optional(TagMap),
});
export type CreateConversationBody = Static<typeof CreateConversationBodySchema>;

export const GetOrCreateConversationBodySchema = Type.Object({
  channel: Type.String({ minLength: 1, maxLength: 200 }),
  tags: Type.Optional(TagChangeMap),
  integrationName: Type.Optional(Type.String({ maxLength: 200 })),
  properties: Type.Optional(TagChangeMap),
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
});
export type GetOrCreateConversationBody = Static<typeof GetOrCreateConversationBodySchema>;

export const UpdateConversationBodySchema = Type.Object({
  currentTaskId: Type.Optional(Type.String()),
  currentWorkflowId: Type.Optional(Type.String()),
  tags: Type.Optional(TagChangeMap),
  properties: Type.Optional(TagChangeMap),
});
export type UpdateConversationBody = Static<typeof UpdateConversationBodySchema>;

export const ScheduleSchema = Type.Object({
  dateTime: Type.Optional(Type.String({ format: 'date-time' })),
  delay: Type.Optional(DurationMs('Delay in milliseconds')),
});

export const CreateEventBodySchema = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 200 }),
  payload: JsonObject,
  schedule: Type.Optional(ScheduleSchema),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  workflowId: Type.Optional(Type.String()),
  messageId: Type.Optional(Type.String()),
});
export type CreateEventBody = Static<typeof CreateEventBodySchema>;

export const EventSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  type: Type.String(),
  payload: JsonObject,
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  messageId: Type.Optional(Type.String()),
  status: Type.Enum(EVENT_STATUSES),
  failureReason: Type.Union([Type.String(), Type.Null()]),
});
export type Event = Static<typeof EventSchema>;

export const MessageSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  type: Type.String(),
  payload: JsonObject,
  direction: Type.Enum(MESSAGE_DIRECTIONS),
  userId: Type.String(),
  conversationId: Type.String(),
  tags: TagMap,
  origin: Type.Optional(Type.Literal('synthetic')),
  eventId: Type.Optional(
    Type.String({ description: 'Parley: the event whose turn sent the message (a bot’s reply in a turn)' }),
  ),
});
export type Message = Static<typeof MessageSchema>;

const MessageType = Type.String({ minLength: 1, maxLength: 200 });

export const CreateMessageBodySchema = Type.Object({
  payload: JsonObject,
  userId: Type.String(),
  conversationId: Type.String(),
  type: MessageType,
  tags: Type.Optional(TagMap),
  schedule: Type.Optional(ScheduleSchema),
  origin: Type.Optional(Type.Literal('synthetic')),
});
export type CreateMessageBody = Static<typeof CreateMessageBodySchema>;

export const GetOrCreateMessageBodySchema = Type.Object({
  payload: Type.Optional(JsonObject),
  userId: Type.String(),
  conversationId: Type.String(),
  type: MessageType,
  tags: Type.Optional(TagChangeMap),
  schedule: Type.Optional(ScheduleSchema),
  origin: Type.Optional(Type.Literal('synthetic')),
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
});
export type GetOrCreateMessageBody = Static<typeof GetOrCreateMessageBodySchema>;

export const UpdateMessageBodySchema = Type.Object({
  tags: Type.Optional(TagChangeMap),
  payload: Type.Optional(JsonObject),
});
export type UpdateMessageBody = Static<typeof UpdateMessageBodySchema>;

const Discriminate = { discriminateByTags: Type.Optional(Type.Array(Type.String())) };

export const InitializeIncomingMessageBodySchema = Type.Object({
  userId: Type.Optional(Type.String()),
  user: Type.Optional(Type.Object({ ...CreateUserBodySchema.properties, tags: TagMap, ...Discriminate })),
  conversationId: Type.Optional(Type.String()),
  conversation: Type.Optional(
    Type.Object({ ...CreateConversationBodySchema.properties, tags: TagMap, ...Discriminate }),
  ),
  message: Type.Optional(
    Type.Object({
      payload: JsonObject,
      type: MessageType,
      tags: TagMap,
      origin: Type.Optional(Type.Literal('synthetic')),
      ...Discriminate,
    }),
  ),
});
export type InitializeIncomingMessageBody = Static<typeof InitializeIncomingMessageBodySchema>;

/** At most this many messages per import. */
export const IMPORT_MAX_MESSAGES = 1000;

export const ImportMessagesBodySchema = Type.Object({
  messages: Type.Array(
    Type.Object({
      payload: JsonObject,
      userId: Type.String(),
      conversationId: Type.String(),
      type: MessageType,
      tags: Type.Optional(TagMap),
      createdAt: Timestamp,
      ...Discriminate,
    }),
    { maxItems: IMPORT_MAX_MESSAGES },
  ),
});
export type ImportedMessage = Static<typeof ImportMessagesBodySchema>['messages'][number];

export const StateSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  botId: Type.String(),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  name: Type.String(),
  type: Type.Enum(STATE_TYPES),
  payload: JsonObject,
  expiry: Type.Optional(Type.Number()),
  expiresAt: Type.Optional(Timestamp),
});
export type State = Static<typeof StateSchema>;

export const Expiry = Type.Union([DurationMs('Lifetime in milliseconds'), Type.Null()]);

export const WorkflowSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Enum(WORKFLOW_STATUSES),
  input: JsonObject,
  output: JsonObject,
  parentWorkflowId: Type.Optional(Type.String()),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Type.Optional(Timestamp),
  failureReason: Type.Optional(Type.String()),
  timeoutAt: Timestamp,
  tags: TagMap,
});
export type Workflow = Static<typeof WorkflowSchema>;

const StartStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('in_progress'),
  Type.Literal('listening'),
]);

export const CreateWorkflowBodySchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  input: Type.Optional(JsonObject),
  parentWorkflowId: Type.Optional(Type.String()),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  timeoutAt: Type.Optional(Type.String({ format: 'date-time' })),
  tags: Type.Optional(TagMap),
  status: StartStatus,
  eventId: Type.Optional(Type.String()),
});
export type CreateWorkflowBody = Static<typeof CreateWorkflowBodySchema>;

export const GetOrCreateWorkflowBodySchema = Type.Object({
  ...CreateWorkflowBodySchema.properties,
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
  discriminateByStatusGroup: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('finished')])),
});
export type GetOrCreateWorkflowBody = Static<typeof GetOrCreateWorkflowBodySchema>;

export const UpdateWorkflowBodySchema = Type.Object({
  output: Type.Optional(JsonObject),
  timeoutAt: Type.Optional(Type.String({ format: 'date-time' })),
  status: Type.Optional(
    Type.Enum(['completed', 'cancelled', 'listening', 'paused', 'failed', 'in_progress']),
  ),
  failureReason: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(TagChangeMap),
  userId: Type.Optional(Type.String()),
  eventId: Type.Optional(Type.String()),
});
export type UpdateWorkflowBody = Static<typeof UpdateWorkflowBodySchema>;

export const TAGGED_TYPES = { user: 'users', conversation: 'conversations', message: 'messages' } as const;
export type TaggedType = keyof typeof TAGGED_TYPES;

/** Longest `type` of an action call. */
export const ACTION_TYPE_MAX_LENGTH = 200;
