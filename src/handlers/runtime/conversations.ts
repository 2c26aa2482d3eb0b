import type { BotActor } from '../../domain/workspace/actors.ts';
import type { conversationOperations } from '../../contract/runtime/conversations.ts';
import type { Handlers } from '../operation.ts';

export const conversationHandlers = {
  createConversation: async (d, actor, body) => ({
    conversation:
      (await d.proactive.conversation(actor, body, 'new'))?.conversation ??
      (await d.conversations.create(actor, body)),
  }),
  getConversation: async (d, actor, { id }) => ({ conversation: await d.conversations.get(actor, id) }),
  listConversations: (d, actor, query) => d.conversations.list(actor, query),
  getOrCreateConversation: async (d, actor, body) => {
    const { conversation, created } =
      (await d.proactive.conversation(actor, body, 'reuse')) ??
      (await d.conversations.getOrCreate(actor, body));
    return { conversation, meta: { created } };
  },
  updateConversation: async (d, actor, { id, ...body }) => ({
    conversation: await d.conversations.update(actor, id, body),
  }),
  deleteConversation: async (d, actor, { id }) => {
    await d.conversations.delete(actor, id);
    return {};
  },
  listParticipants: (d, actor, { id, ...page }) => d.conversations.listParticipants(actor, id, page),
  addParticipant: async (d, actor, { id, userId }) => ({
    participant: await d.conversations.addParticipant(actor, id, userId),
  }),
  getParticipant: async (d, actor, { id, userId }) => ({
    participant: await d.conversations.getParticipant(actor, id, userId),
  }),
  removeParticipant: async (d, actor, { id, userId }) => {
    await d.conversations.removeParticipant(actor, id, userId);
    return {};
  },
} satisfies Handlers<BotActor, typeof conversationOperations>;
