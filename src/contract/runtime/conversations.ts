import { Type } from 'typebox';
import { INT32, TagMap } from '../../domain/shared/schemas.ts';
import { CreatedMeta, EmptySchema, IdParam, SortQuery } from '../schemas.ts';
import { Model } from '../models.ts';
import {
  CreateConversationBodySchema,
  GetOrCreateConversationBodySchema,
  UpdateConversationBodySchema,
} from '../../domain/runtime/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Conversations';
const ConversationAnswer = Type.Object({ conversation: Model.Conversation });
const ParticipantAnswer = Type.Object({ participant: Model.User });
const ParticipantParams = { id: Type.String(), userId: Type.String() };

export const conversationOperations = [
  operation({
    id: 'createConversation',
    method: 'POST',
    path: '/conversations',
    access: 'write',
    tag,
    summary: 'Create a conversation',
    status: 201,
    body: CreateConversationBodySchema.properties,
    response: ConversationAnswer,
  }),
  operation({
    id: 'getConversation',
    method: 'GET',
    path: '/conversations/:id',
    access: 'read',
    tag,
    summary: 'Get a conversation',
    params: IdParam,
    response: ConversationAnswer,
  }),
  listOperation({
    id: 'listConversations',
    path: '/conversations',
    tag,
    summary: 'List conversations',
    description: 'Most recent first unless sorted otherwise.',
    query: {
      ...SortQuery,
      tags: Type.Optional(TagMap),
      participantIds: Type.Optional(Type.Array(Type.String())),
      integrationName: Type.Optional(Type.String()),
      channel: Type.Optional(Type.String()),
      afterDate: Type.Optional(Type.String({ format: 'date-time' })),
      beforeDate: Type.Optional(Type.String({ format: 'date-time' })),
      minMessageCount: Type.Optional(Type.Integer({ ...INT32, minimum: 0 })),
      maxMessageCount: Type.Optional(Type.Integer({ ...INT32, minimum: 0 })),
    },
    key: 'conversations',
    item: Model.Conversation,
  }),
  operation({
    id: 'getOrCreateConversation',
    method: 'POST',
    path: '/conversations/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a conversation',
    description: 'Matches on the tags named by `discriminateByTags` (all tags given, when none are named).',
    body: GetOrCreateConversationBodySchema.properties,
    response: Type.Object({ conversation: Model.Conversation, meta: CreatedMeta }),
  }),
  operation({
    id: 'updateConversation',
    method: 'PUT',
    path: '/conversations/:id',
    access: 'write',
    tag,
    summary: 'Update a conversation',
    params: IdParam,
    body: UpdateConversationBodySchema.properties,
    response: ConversationAnswer,
  }),
  operation({
    id: 'deleteConversation',
    method: 'DELETE',
    path: '/conversations/:id',
    access: 'write',
    tag,
    summary: 'Delete a conversation',
    description: 'Deletes the conversation with its messages, events, participants and states.',
    params: IdParam,
    response: EmptySchema,
  }),
  listOperation({
    id: 'listParticipants',
    path: '/conversations/:id/participants',
    tag,
    summary: 'List the participants of a conversation',
    params: IdParam,
    key: 'participants',
    item: Model.User,
  }),
  operation({
    id: 'addParticipant',
    method: 'POST',
    path: '/conversations/:id/participants',
    access: 'write',
    tag,
    summary: 'Add a participant to a conversation',
    params: IdParam,
    body: { userId: Type.String() },
    response: ParticipantAnswer,
  }),
  operation({
    id: 'getParticipant',
    method: 'GET',
    path: '/conversations/:id/participants/:userId',
    access: 'read',
    tag,
    summary: 'Get a participant of a conversation',
    params: ParticipantParams,
    response: ParticipantAnswer,
  }),
  operation({
    id: 'removeParticipant',
    method: 'DELETE',
    path: '/conversations/:id/participants/:userId',
    access: 'write',
    tag,
    summary: 'Remove a participant from a conversation',
    params: ParticipantParams,
    response: EmptySchema,
  }),
] as const;
