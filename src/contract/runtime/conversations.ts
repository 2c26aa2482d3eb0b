import { Type } from 'typebox';
import {
  ConversationSchema,
  CreateConversationBodySchema,
  GetOrCreateConversationBodySchema,
  UpdateConversationBodySchema,
} from '../../domain/runtime/conversations.ts';
import { INT32, TagMap } from '../../domain/shared/schemas.ts';
import { UserSchema } from '../../domain/runtime/users.ts';
import { listOperation, operation } from './define.ts';
import { CreatedMeta, EmptySchema, IdParam, SortQuery } from '../schemas.ts';

const tag = 'Conversations';
const ConversationAnswer = Type.Object({ conversation: ConversationSchema });
const ParticipantAnswer = Type.Object({ participant: UserSchema });
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
    handler: async (d, actor, body) => ({
      conversation:
        (await d.proactive.conversation(actor, body, 'new'))?.conversation ??
        (await d.conversations.create(actor, body)),
    }),
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
    handler: async (d, actor, { id }) => ({ conversation: await d.conversations.get(actor, id) }),
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
    item: ConversationSchema,
    handler: (d, actor, query) => d.conversations.list(actor, query),
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
    response: Type.Object({ conversation: ConversationSchema, meta: CreatedMeta }),
    handler: async (d, actor, body) => {
      const { conversation, created } =
        (await d.proactive.conversation(actor, body, 'reuse')) ??
        (await d.conversations.getOrCreate(actor, body));
      return { conversation, meta: { created } };
    },
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
    handler: async (d, actor, { id, ...body }) => ({
      conversation: await d.conversations.update(actor, id, body),
    }),
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
    handler: async (d, actor, { id }) => {
      await d.conversations.delete(actor, id);
      return {};
    },
  }),
  listOperation({
    id: 'listParticipants',
    path: '/conversations/:id/participants',
    tag,
    summary: 'List the participants of a conversation',
    params: IdParam,
    key: 'participants',
    item: UserSchema,
    handler: (d, actor, { id, ...page }) => d.conversations.listParticipants(actor, id, page),
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
    handler: async (d, actor, { id, userId }) => ({
      participant: await d.conversations.addParticipant(actor, id, userId),
    }),
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
    handler: async (d, actor, { id, userId }) => ({
      participant: await d.conversations.getParticipant(actor, id, userId),
    }),
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
    handler: async (d, actor, { id, userId }) => {
      await d.conversations.removeParticipant(actor, id, userId);
      return {};
    },
  }),
];
