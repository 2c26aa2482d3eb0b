import { Type } from 'typebox';
import {} from '../../domain/webchat/models.ts';
import { EmptySchema } from '../schemas.ts';
import { deleteConversation } from '../chat/shared.ts';
import { tag } from './tag.ts';
import { Model } from '../models.ts';
import { listOperation, operation } from '../operation.ts';

const ConversationAnswer = Type.Object({ conversation: Model.WebchatConversation });
const ParticipantAnswer = Type.Object({ participant: Model.WebchatUser });
const IdParams = { id: Type.String() };
const ParticipantParams = { id: Type.String(), userId: Type.String() };

export const webchatConversationOperations = [
  operation({
    id: 'createConversation',
    method: 'POST',
    path: '/conversations',
    access: 'write',
    tag,
    summary: 'Create a conversation',
    status: 201,
    response: ConversationAnswer,
  }),
  listOperation({
    id: 'listConversations',
    path: '/conversations',
    tag,
    summary: 'List the conversations the user owns, each with its last message',
    pageSize: false,
    key: 'conversations',
    item: Model.WebchatConversation,
  }),
  operation({
    id: 'getConversation',
    method: 'GET',
    path: '/conversations/:id',
    access: 'read',
    tag,
    summary: 'Get a conversation',
    params: IdParams,
    response: ConversationAnswer,
  }),
  deleteConversation(tag),
  listOperation({
    id: 'listConversationMessages',
    path: '/conversations/:id/messages',
    tag,
    summary: 'List the messages of a conversation, newest first',
    pageSize: false,
    params: IdParams,
    key: 'messages',
    item: Model.WebchatMessage,
  }),
  operation({
    id: 'addParticipant',
    method: 'POST',
    path: '/conversations/:id/participants',
    access: 'write',
    tag,
    summary: 'Add a participant to a conversation the user owns',
    params: IdParams,
    body: { userId: Type.String() },
    response: ParticipantAnswer,
  }),
  listOperation({
    id: 'listParticipants',
    path: '/conversations/:id/participants',
    tag,
    summary: 'List the participants of a conversation',
    pageSize: false,
    params: IdParams,
    key: 'participants',
    item: Model.WebchatUser,
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
    summary: 'Remove a participant from a conversation the user owns',
    params: ParticipantParams,
    response: EmptySchema,
  }),
] as const;
