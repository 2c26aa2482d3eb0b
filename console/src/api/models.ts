// The Admin API operations of a workspace's own model providers and of a bot's `best`/`fast` choices
// (Parley's own, declared in src/contract/admin/llm-providers.ts), through the contract's client.
import { APIS, apiClient } from './client.ts';
import type { AdminIn, Out } from './types.ts';

export type LlmProvider = Out<'listLlmProviders'>['providers'][number];
export type NewLlmProvider = AdminIn<'createLlmProvider'>;
export type BotModels = Out<'getBotModels'>;

const session = apiClient(APIS.admin);

export const models = {
  listLlmProviders: () => session.listLlmProviders(),
  createLlmProvider: (body: NewLlmProvider) => session.createLlmProvider(body),
  refreshLlmProviderModels: (name: string) => session.refreshLlmProviderModels({ name }),
  deleteLlmProvider: (name: string) => session.deleteLlmProvider({ name }),
  getBotModels: (botId: string) => session.getBotModels({ id: botId }),
  updateBotModels: (botId: string, body: Omit<AdminIn<'updateBotModels'>, 'id'>) =>
    session.updateBotModels({ ...body, id: botId }),
};
