import { Type } from 'typebox';
import { ChatConversationSchema, ChatUserSchema } from '../../domain/chat/chat.ts';
import { FOREIGN_ID_MAX_LENGTH } from '../../domain/chat/foreign-ids.ts';
import { EmptySchema } from '../schemas.ts';
import { tag, user } from './define.ts';

const ForeignId = Type.String({ minLength: 1, maxLength: FOREIGN_ID_MAX_LENGTH });
const ConversationAnswer = Type.Object({ conversation: ChatConversationSchema });
const ConversationParams = { conversationId: Type.String() };
const ParticipantParams = { conversationId: Type.String(), userId: Type.String() };
const ParticipantAnswer = Type.Object({ participant: ChatUserSchema });

export const chatConversationOperations = [
  user.operation({
    id: 'createConversation',
    method: 'POST',
    path: '/conversations',
    access: 'write',
    tag,
    summary: 'Create a conversation',
    status: 201,
    body: { id: Type.Optional(ForeignId) },
    response: ConversationAnswer,
    handler: async (d, session, { id }) => ({ conversation: await d.chat.createConversation(session, id) }),
  }),
  user.operation({
    id: 'getOrCreateConversation',
    method: 'POST',
    path: '/conversations/get-or-create',
    access: 'write',
    tag,
    summary: 'Get or create a conversation',
    status: 201,
    body: { id: ForeignId },
    response: ConversationAnswer,
    handler: async (d, session, { id }) => ({
      conversation: await d.chat.getOrCreateConversation(session, id),
    }),
  }),
  user.operation({
    id: 'getConversation',
    method: 'GET',
    path: '/conversations/:id',
    access: 'read',
    tag,
    summary: 'Get a conversation',
    params: { id: Type.String() },
    response: ConversationAnswer,
    handler: async (d, session, { id }) => ({ conversation: await d.chat.getConversation(session, id) }),
  }),
  user.operation({
    id: 'deleteConversation',
    method: 'DELETE',
    path: '/conversations/:id',
    access: 'write',
    tag,
    summary: 'Delete a conversation',
    params: { id: Type.String() },
    response: EmptySchema,
    handler: async (d, session, { id }) => {
      await d.chat.deleteConversation(session, id);
      return {};
    },
  }),
  user.listOperation({
    id: 'listConversations',
    path: '/conversations',
    tag,
    summary: 'List the conversations the user owns',
    description: 'The conversations the user owns, most recent first.',
    pageSize: false,
    key: 'conversations',
    item: ChatConversationSchema,
    handler: (d, session, page) => d.chat.listConversations(session, page),
  }),
  user.operation({
    id: 'addParticipant',
    method: 'POST',
    path: '/conversations/:conversationId/participants',
    access: 'write',
    tag,
    summary: 'Add a participant to a conversation',
    params: ConversationParams,
    body: { userId: Type.String() },
    response: ParticipantAnswer,
    handler: async (d, session, { conversationId, userId }) => ({
      participant: await d.chat.addParticipant(session, conversationId, userId),
    }),
  }),
  user.operation({
    id: 'getParticipant',
    method: 'GET',
    path: '/conversations/:conversationId/participants/:userId',
    access: 'read',
    tag,
    summary: 'Get a participant of a conversation',
    params: ParticipantParams,
    response: ParticipantAnswer,
    handler: async (d, session, { conversationId, userId }) => ({
      participant: await d.chat.getParticipant(session, conversationId, userId),
    }),
  }),
  user.operation({
    id: 'removeParticipant',
    method: 'DELETE',
    path: '/conversations/:conversationId/participants/:userId',
    access: 'write',
    tag,
    summary: 'Remove a participant from a conversation',
    params: ParticipantParams,
    response: EmptySchema,
    handler: async (d, session, { conversationId, userId }) => {
      await d.chat.removeParticipant(session, conversationId, userId);
      return {};
    },
  }),
  user.listOperation({
    id: 'listParticipants',
    path: '/conversations/:conversationId/participants',
    tag,
    summary: 'List the participants of a conversation',
    pageSize: false,
    params: ConversationParams,
    key: 'participants',
    item: ChatUserSchema,
    handler: (d, session, { conversationId, ...page }) =>
      d.chat.listParticipants(session, conversationId, page),
  }),
];
