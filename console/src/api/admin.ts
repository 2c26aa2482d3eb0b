// The Admin API operations the console uses (`/v1/admin`), named as in the official client.
import { request } from './http.ts';
import type { Credentials } from './http.ts';
import type {
  AdminIn,
  AnalyticsInterval,
  AnalyticsRecord,
  BotWebhook,
  Out,
  Role,
  WebhookSubscription,
} from './types.ts';

const base = '/v1/admin';
const id = (value: string) => encodeURIComponent(value);

export const admin = {
  getAccount: (credentials?: Credentials) =>
    request<Out<'getAccount'>>('GET', `${base}/account/me`, { ...(credentials && { credentials }) }),
  listWorkspaces: (credentials?: Credentials) =>
    request<Out<'listWorkspaces'>>('GET', `${base}/workspaces`, {
      query: { pageSize: 100 },
      ...(credentials && { credentials }),
    }),
  getWorkspaceMember: (credentials?: Credentials) =>
    request<Out<'getWorkspaceMember'>>('GET', `${base}/workspace-members/me`, {
      ...(credentials && { credentials }),
    }),

  listBots: (query: { nextToken?: string }) =>
    request<Out<'listBots'>>('GET', `${base}/bots`, { query: { pageSize: 100, ...query } }),
  getBot: (botId: string) => request<Out<'getBot'>>('GET', `${base}/bots/${id(botId)}`),
  createBot: (body: Omit<AdminIn<'createBot'>, never>) =>
    request<Out<'createBot'>>('POST', `${base}/bots`, { body }),
  updateBot: (botId: string, body: Omit<AdminIn<'updateBot'>, 'id'>) =>
    request<Out<'updateBot'>>('PUT', `${base}/bots/${id(botId)}`, { body }),
  deleteBot: (botId: string) => request<Out<'deleteBot'>>('DELETE', `${base}/bots/${id(botId)}`),
  getBotLogs: (botId: string, query: Omit<AdminIn<'getBotLogs'>, 'id'>, signal?: AbortSignal) =>
    request<Out<'getBotLogs'>>('GET', `${base}/bots/${id(botId)}/logs`, { query, ...(signal && { signal }) }),
  getBotAnalytics: (
    botId: string,
    query: { startDate: string; endDate: string; interval: AnalyticsInterval },
  ) => request<{ records: AnalyticsRecord[] }>('GET', `${base}/bots/${id(botId)}/analytics`, { query }),

  listBotApiKeys: (botId: string) =>
    request<Out<'listBotApiKeys'>>('GET', `${base}/bots/baks`, { query: { botId } }),
  createBotApiKey: (botId: string, note: string) =>
    request<Out<'createBotApiKey'>>('POST', `${base}/bots/baks`, { body: { botId, note } }),
  deleteBotApiKey: (keyId: string) =>
    request<Out<'deleteBotApiKey'>>('DELETE', `${base}/bots/baks/${id(keyId)}`),

  getBotWebhook: (botId: string) =>
    request<{ webhook: BotWebhook }>('GET', `${base}/bots/${id(botId)}/webhook`),
  listWebhookSubscriptions: (botId: string) =>
    request<{ subscriptions: WebhookSubscription[] }>(
      'GET',
      `${base}/bots/${id(botId)}/webhook-subscriptions`,
    ),
  createWebhookSubscription: (botId: string, body: { url: string; eventTypes: string[] }) =>
    request<{ subscription: WebhookSubscription; secret: string }>(
      'POST',
      `${base}/bots/${id(botId)}/webhook-subscriptions`,
      { body },
    ),
  deleteWebhookSubscription: (botId: string, subscriptionId: string) =>
    request<Record<string, never>>(
      'DELETE',
      `${base}/bots/${id(botId)}/webhook-subscriptions/${id(subscriptionId)}`,
    ),

  listWorkspaceMembers: (query: { nextToken?: string }) =>
    request<Out<'listWorkspaceMembers'>>('GET', `${base}/workspace-members`, {
      query: { pageSize: 100, ...query },
    }),
  createWorkspaceMember: (email: string, role: Role) =>
    request<Out<'createWorkspaceMember'>>('POST', `${base}/workspace-members`, { body: { email, role } }),
  updateWorkspaceMember: (memberId: string, role: Role) =>
    request<Out<'updateWorkspaceMember'>>('PUT', `${base}/workspace-members/${id(memberId)}`, {
      body: { role },
    }),
  deleteWorkspaceMember: (memberId: string) =>
    request<Out<'deleteWorkspaceMember'>>('DELETE', `${base}/workspace-members/${id(memberId)}`),

  listPersonalAccessTokens: () => request<Out<'listPersonalAccessTokens'>>('GET', `${base}/account/pats`),
  createPersonalAccessToken: (note: string) =>
    request<Out<'createPersonalAccessToken'>>('POST', `${base}/account/pats`, { body: { note } }),
  deletePersonalAccessToken: (tokenId: string) =>
    request<Out<'deletePersonalAccessToken'>>('DELETE', `${base}/account/pats/${id(tokenId)}`),
};
