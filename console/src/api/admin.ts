// The Admin API operations the console uses, through the contract's client: named as in the official
// client, with the console's page sizes.
import { PAGE_SIZE_MAX } from '../../../src/domain/shared/page-size.ts';
import { APIS, apiClient } from './client.ts';
import type { Credentials } from './http.ts';
import type { AdminIn, AnalyticsInterval, Role } from './types.ts';

/** As the session, or with other credentials (signing in, choosing a workspace). */
const as = (credentials?: Credentials) => apiClient(APIS.admin, credentials ? { credentials } : {});
const session = as();

export const admin = {
  getAccount: (credentials?: Credentials) => as(credentials).getAccount(),
  listWorkspaces: (credentials?: Credentials) => as(credentials).listWorkspaces({ pageSize: PAGE_SIZE_MAX }),
  getWorkspaceMember: (credentials?: Credentials) => as(credentials).getWorkspaceMember(),

  listBots: (query: { nextToken?: string }) => session.listBots({ pageSize: PAGE_SIZE_MAX, ...query }),
  getBot: (botId: string) => session.getBot({ id: botId }),
  createBot: (body: AdminIn<'createBot'>) => session.createBot(body),
  updateBot: (botId: string, body: Omit<AdminIn<'updateBot'>, 'id'>) =>
    session.updateBot({ ...body, id: botId }),
  deleteBot: (botId: string) => session.deleteBot({ id: botId }),
  getBotLogs: (botId: string, query: Omit<AdminIn<'getBotLogs'>, 'id'>, signal?: AbortSignal) =>
    apiClient(APIS.admin, signal ? { signal } : {}).getBotLogs({ ...query, id: botId }),
  getBotPackage: (botId: string) => session.getBotPackage({ id: botId }),
  getBotAnalytics: (
    botId: string,
    query: { startDate: string; endDate: string; interval: AnalyticsInterval },
  ) => session.getBotAnalytics({ ...query, id: botId }),

  getBotDraft: (botId: string) => session.getBotDraft({ id: botId }),
  validateBotDraft: (botId: string, files: AdminIn<'validateBotDraft'>['files'], signal?: AbortSignal) =>
    apiClient(APIS.admin, signal ? { signal } : {}).validateBotDraft({ id: botId, files }),
  saveBotDraft: (botId: string, body: Omit<AdminIn<'saveBotDraft'>, 'id'>) =>
    session.saveBotDraft({ ...body, id: botId }),
  discardBotDraft: (botId: string) => session.discardBotDraft({ id: botId }),
  deployBotDraft: (botId: string, note: string) =>
    session.deployBotDraft({ id: botId, ...(note.trim() && { note: note.trim() }) }),
  startBotDraftTest: (botId: string, files: AdminIn<'startBotDraftTest'>['files']) =>
    session.startBotDraftTest({ id: botId, files }),
  listBotDraftTestTurns: (botId: string, messageId: string, signal?: AbortSignal) =>
    apiClient(APIS.admin, signal ? { signal } : {}).listBotDraftTestTurns({ id: botId, messageId }),

  listBotVersions: (botId: string) => session.listBotVersions({ id: botId }),
  deployBotVersion: (botId: string, versionId: string) => session.deployBotVersion({ id: botId, versionId }),

  listBotApiKeys: (botId: string) => session.listBotApiKeys({ botId }),
  createBotApiKey: (botId: string, note: string) => session.createBotApiKey({ botId, note }),
  deleteBotApiKey: (keyId: string) => session.deleteBotApiKey({ id: keyId }),

  getBotWebhook: (botId: string) => session.getBotWebhook({ id: botId }),
  listWebhookSubscriptions: (botId: string) => session.listWebhookSubscriptions({ id: botId }),
  createWebhookSubscription: (botId: string, body: { url: string; eventTypes: string[] }) =>
    session.createWebhookSubscription({ ...body, id: botId }),
  deleteWebhookSubscription: (botId: string, subscriptionId: string) =>
    session.deleteWebhookSubscription({ id: botId, subscriptionId }),

  listWorkspaceMembers: (query: { nextToken?: string }) =>
    session.listWorkspaceMembers({ pageSize: PAGE_SIZE_MAX, ...query }),
  createWorkspaceMember: (email: string, role: Role) => session.createWorkspaceMember({ email, role }),
  updateWorkspaceMember: (memberId: string, role: Role) =>
    session.updateWorkspaceMember({ id: memberId, role }),
  deleteWorkspaceMember: (memberId: string) => session.deleteWorkspaceMember({ id: memberId }),

  listPersonalAccessTokens: () => session.listPersonalAccessTokens(),
  createPersonalAccessToken: (note: string) => session.createPersonalAccessToken({ note }),
  deletePersonalAccessToken: (tokenId: string) => session.deletePersonalAccessToken({ id: tokenId }),
};
