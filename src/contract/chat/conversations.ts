import { Type } from 'typebox';
import { EmptySchema } from '../schemas.ts';
import { tag } from './tag.ts';
import { deleteConversation } from './shared.ts';
import { Model } from '../models.ts';
import { ForeignIdSchema } from '../../domain/chat/schemas.ts';
import { listOperation, operation } from '../operation.ts';

const ConversationAnswer = Type.Object({ conversation: Model.ChatConversation });
const ConversationParams = { conversationId: Type.String() };
const ParticipantParams = { conversationId: Type.String(), userId: Type.String() };
const ParticipantAnswer = Type.Object({ participant: Model.ChatUser });

export const chatConversationOperations = [
  operation({
    id: 'createConversation',
    method: 'POST',
    path: '/conversations',
    access: 'write',
    tag,
    summary: 'Create a conversation',
    status: 201,
    body: { id: Type.Optional(ForeignIdSchema) },
    response: ConversationAnswer,
  }),
  operation({
    id: 'getOrCreateConversation',
    method: 'POST',
    path: '/conversations/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a conversation',
    status: 201,
    body: { id: ForeignIdSchema },
    response: ConversationAnswer,
  }),
  operation({
    id: 'getConversation',
    method: 'GET',
    path: '/conversations/:id',
    access: 'read',
    tag,
    summary: 'Get a conversation',
    params: { id: Type.String() },
    response: ConversationAnswer,
  }),
  deleteConversation(tag),
  listOperation({
    id: 'listConversations',
    path: '/conversations',
    tag,
    summary: 'List the conversations the user owns',
    description: 'The conversations the user owns, most recent first.',
    pageSize: false,
    key: 'conversations',
    item: Model.ChatConversation,
  }),
  operation({
    id: 'addParticipant',
    method: 'POST',
    path: '/conversations/:conversationId/participants',
    access: 'write',
    tag,
    summary: 'Add a participant to a conversation',
    params: ConversationParams,
    body: { userId: Type.String() },
    response: ParticipantAnswer,
  }),
  operation({
    id: 'getParticipant',
    method: 'GET',
    path: '/conversations/:conversationId/participants/:userId',
    access: 'read',
    tag,
    summary: 'Get a participant of a conversation',
    params: ParticipantParams,
    response: ParticipantAnswer,
  }),
  operation({
    id: 'removeParticipant',
    method: 'DELETE',
    path: '/conversations/:conversationId/participants/:userId',
    access: 'write',
    tag,
    summary: 'Remove a participant from a conversation',
    params: ParticipantParams,
    response: EmptySchema,
  }),
  listOperation({
    id: 'listParticipants',
    path: '/conversations/:conversationId/participants',
    tag,
    summary: 'List the participants of a conversation',
    pageSize: false,
    params: ConversationParams,
    key: 'participants',
    item: Model.ChatUser,
  }),
] as const;
