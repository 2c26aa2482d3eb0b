// The Admin API operations of a workspace's own model providers and of a bot's `best`/`fast` choices
// (Parley's own, declared in src/contract/admin/llm-providers.ts, whose types these are).
import type { Static } from 'typebox';
import type { botModelOperations, llmProviderOperations } from '../../../src/contract/admin/llm-providers.ts';
import { request } from './http.ts';

type Operation = (typeof llmProviderOperations)[number] | (typeof botModelOperations)[number];
type In<Id extends Operation['id']> = Static<Extract<Operation, { id: Id }>['input']>;
type Answer<Id extends Operation['id']> = Static<Extract<Operation, { id: Id }>['response']>;

export type LlmProvider = Answer<'listLlmProviders'>['providers'][number];
export type NewLlmProvider = In<'createLlmProvider'>;
export type BotModels = Answer<'getBotModels'>;

const base = '/v1/admin';
const e = encodeURIComponent;

export const models = {
  listLlmProviders: () => request<Answer<'listLlmProviders'>>('GET', `${base}/llm-providers`),
  createLlmProvider: (body: NewLlmProvider) =>
    request<Answer<'createLlmProvider'>>('POST', `${base}/llm-providers`, { body }),
  refreshLlmProviderModels: (name: string) =>
    request<Answer<'refreshLlmProviderModels'>>('POST', `${base}/llm-providers/${e(name)}/refresh-models`),
  deleteLlmProvider: (name: string) =>
    request<Answer<'deleteLlmProvider'>>('DELETE', `${base}/llm-providers/${e(name)}`),
  getBotModels: (botId: string) => request<BotModels>('GET', `${base}/bots/${e(botId)}/models`),
  updateBotModels: (botId: string, body: Omit<In<'updateBotModels'>, 'id'>) =>
    request<BotModels>('PUT', `${base}/bots/${e(botId)}/models`, { body }),
};
