import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botModelOperations, llmProviderOperations } from '../../contract/admin/llm-providers.ts';
import type { Handlers } from '../operation.ts';

export const llmProviderHandlers = {
  listLlmProviders: async (d, actor) => ({ providers: await d.llmProviders.list(actor) }),
  createLlmProvider: async (d, actor, body) => ({ provider: await d.llmProviders.create(actor, body) }),
  updateLlmProvider: async (d, actor, { name, ...body }) => ({
    provider: await d.llmProviders.update(actor, name, body),
  }),
  refreshLlmProviderModels: async (d, actor, { name }) => ({
    provider: await d.llmProviders.refreshModels(actor, name),
  }),
  deleteLlmProvider: async (d, actor, { name }) => {
    await d.llmProviders.delete(actor, name);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof llmProviderOperations>;

export const botModelHandlers = {
  getBotModels: (d, actor, { id }) => d.botModels.get(actor, id),
  updateBotModels: (d, actor, { id, ...body }) => d.botModels.update(actor, id, body),
} satisfies Handlers<WorkspaceActor, typeof botModelOperations>;
