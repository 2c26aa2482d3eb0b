import type { BotActor } from '../../domain/workspace/actors.ts';
import type { messageOperations } from '../../contract/runtime/messages.ts';
import type { Handlers } from '../operation.ts';

export const messageHandlers = {
  // Through the handoffs: a bot forwarding a `hitl` handoff's agent's message writes it as the agent.
  createMessage: async (d, actor, body) => ({ message: await d.handoffs.createMessage(actor, body) }),
  getOrCreateMessage: async (d, actor, body) => {
    const { message, created } = await d.messages.getOrCreate(actor, body);
    return { message, meta: { created } };
  },
  getMessage: async (d, actor, { id }) => ({ message: await d.messages.get(actor, id) }),
  updateMessage: async (d, actor, { id, ...body }) => ({ message: await d.messages.update(actor, id, body) }),
  listMessages: (d, actor, query) => d.messages.list(actor, query),
  deleteMessage: async (d, actor, { id }) => {
    await d.messages.delete(actor, id);
    return {};
  },
  initializeIncomingMessage: (d, actor, body) => d.messages.initializeIncoming(actor, body),
  importMessages: async (d, actor, { messages }) => ({
    messages: await d.messages.importMessages(actor, messages),
  }),
} satisfies Handlers<BotActor, typeof messageOperations>;
