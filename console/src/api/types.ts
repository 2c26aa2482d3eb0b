// The wire types of the APIs the console calls, as the official clients declare them: the console speaks
// the public APIs and nothing else, so their published types are the source of truth (types only: neither
// client is bundled).
import type { ClientInputs, ClientOutputs } from '@botpress/client';
import type { ClientRequests, ClientResponses } from '@botpress/chat';

export type AdminIn<K extends keyof ClientInputs> = ClientInputs[K];
export type Out<K extends keyof ClientOutputs> = ClientOutputs[K];
export type ChatOut<K extends keyof ClientResponses> = ClientResponses[K];
export type ChatIn<K extends keyof ClientRequests> = ClientRequests[K];

export type Bot = Out<'getBot'>['bot'];
export type BotSummary = Out<'listBots'>['bots'][number];
export type BotApiKey = Out<'listBotApiKeys'>['baks'][number];
export type NewBotApiKey = Out<'createBotApiKey'>;
export type Workspace = Out<'getWorkspace'>;
export type Member = Out<'getWorkspaceMember'>;
export type Account = Out<'getAccount'>['account'];
export type PersonalAccessToken = Out<'listPersonalAccessTokens'>['pats'][number];
export type NewPersonalAccessToken = Out<'createPersonalAccessToken'>['pat'];
export type Conversation = Out<'getConversation'>['conversation'];
export type Message = Out<'getMessage'>['message'];
export type BotEvent = Out<'getEvent'>['event'];
export type BotLog = Out<'getBotLogs'>['logs'][number];
export type Role = Member['role'];

/** A `getBotAnalytics` record, with the `turns` figures Parley adds to the hosted product's fields. */
export type AnalyticsRecord = Out<'getBotAnalytics'>['records'][number] & {
  turns: { count: number; failed: number; durationMs: { p50: number | null; p99: number | null } };
};
export type AnalyticsInterval = 'hour' | 'day';

export type ChatMessage = ChatOut<'createMessage'>['message'];

/** A bot's webhook ingress (Parley's own `getBotWebhook`). */
export interface BotWebhook {
  id: string;
  url: string;
  verification: 'standard-webhooks' | 'none';
}

/** A URL the bot's events are posted to (Parley's own `listWebhookSubscriptions`). */
export interface WebhookSubscription {
  id: string;
  url: string;
  eventTypes: string[];
  description: string;
  lastDelivery?: {
    status: 'delivered' | 'pending' | 'failed';
    statusCode?: number;
    error?: string;
    at: string;
  };
  createdAt: string;
}
