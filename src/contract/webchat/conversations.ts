import { Type } from 'typebox';
import {
  WebchatConversationSchema,
  WebchatMessageSchema,
  WebchatUserSchema,
} from '../../domain/webchat/models.ts';
import { EmptySchema } from '../schemas.ts';
import { tag, user } from './define.ts';

const ConversationAnswer = Type.Object({ conversation: WebchatConversationSchema });
const ParticipantAnswer = Type.Object({ participant: WebchatUserSchema });
const IdParams = { id: Type.String() };
const ParticipantParams = { id: Type.String(), userId: Type.String() };

export const webchatConversationOperations = [
  user.operation({
    id: 'createConversation',
    method: 'POST',
    path: '/conversations',
    access: 'write',
    tag,
    summary: 'Create a conversation',
    status: 201,
    response: ConversationAnswer,
    handler: async (d, session) => ({ conversation: await d.webchat.createConversation(session) }),
  }),
  user.listOperation({
    id: 'listConversations',
    path: '/conversations',
    tag,
    summary: 'List the conversations the user owns, each with its last message',
    pageSize: false,
    key: 'conversations',
    item: WebchatConversationSchema,
    handler: (d, session, page) => d.webchat.listConversations(session, page),
  }),
  user.operation({
    id: 'getConversation',
    method: 'GET',
    path: '/conversations/:id',
    access: 'read',
    tag,
    summary: 'Get a conversation',
    params: IdParams,
    response: ConversationAnswer,
    handler: async (d, session, { id }) => ({ conversation: await d.webchat.getConversation(session, id) }),
  }),
  user.operation({
    id: 'deleteConversation',
    method: 'DELETE',
    path: '/conversations/:id',
    access: 'write',
    tag,
    summary: 'Delete a conversation the user owns',
    params: IdParams,
    response: EmptySchema,
    handler: async (d, session, { id }) => {
      await d.webchat.deleteConversation(session, id);
      return {};
    },
  }),
  user.listOperation({
    id: 'listConversationMessages',
    path: '/conversations/:id/messages',
    tag,
    summary: 'List the messages of a conversation, newest first',
    pageSize: false,
    params: IdParams,
    key: 'messages',
    item: WebchatMessageSchema,
    handler: (d, session, { id, ...page }) => d.webchat.listMessages(session, id, page),
  }),
  user.operation({
    id: 'addParticipant',
    method: 'POST',
    path: '/conversations/:id/participants',
    access: 'write',
    tag,
    summary: 'Add a participant to a conversation the user owns',
    params: IdParams,
    body: { userId: Type.String() },
    response: ParticipantAnswer,
    handler: async (d, session, { id, userId }) => ({
      participant: await d.webchat.addParticipant(session, id, userId),
    }),
  }),
  user.listOperation({
    id: 'listParticipants',
    path: '/conversations/:id/participants',
    tag,
    summary: 'List the participants of a conversation',
    pageSize: false,
    params: IdParams,
    key: 'participants',
    item: WebchatUserSchema,
    handler: (d, session, { id, ...page }) => d.webchat.listParticipants(session, id, page),
  }),
  user.operation({
    id: 'getParticipant',
    method: 'GET',
    path: '/conversations/:id/participants/:userId',
    access: 'read',
    tag,
    summary: 'Get a participant of a conversation',
    params: ParticipantParams,
    response: ParticipantAnswer,
    handler: async (d, session, { id, userId }) => ({
      participant: await d.webchat.getParticipant(session, id, userId),
    }),
  }),
  user.operation({
    id: 'removeParticipant',
    method: 'DELETE',
    path: '/conversations/:id/participants/:userId',
    access: 'write',
    tag,
    summary: 'Remove a participant from a conversation the user owns',
    params: ParticipantParams,
    response: EmptySchema,
    handler: async (d, session, { id, userId }) => {
      await d.webchat.removeParticipant(session, id, userId);
      return {};
    },
  }),
];
