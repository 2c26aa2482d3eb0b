// The wire types of the APIs the console calls: those of the contract's specs, the server's own.
import type { APIS } from '../../../src/contract/apis.ts';
import type { InputOf, OutputOf } from '../../../src/contract/client.ts';

type AdminOps = typeof APIS.admin.operations;
type RuntimeOps = typeof APIS.runtime.operations;
type ChatOps = typeof APIS.chat.operations;

export type AdminIn<K extends AdminOps[number]['id']> = InputOf<AdminOps, K>;
export type Out<K extends AdminOps[number]['id']> = OutputOf<AdminOps, K>;
export type RuntimeOut<K extends RuntimeOps[number]['id']> = OutputOf<RuntimeOps, K>;
export type ChatOut<K extends ChatOps[number]['id']> = OutputOf<ChatOps, K>;

export type Bot = Out<'getBot'>['bot'];
export type BotSummary = Out<'listBots'>['bots'][number];
export type BotVersion = Out<'listBotVersions'>['versions'][number];
export type BotApiKey = Out<'listBotApiKeys'>['baks'][number];
export type NewBotApiKey = Out<'createBotApiKey'>;
export type Workspace = Out<'getWorkspace'>;
export type Member = Out<'getWorkspaceMember'>;
export type Account = Out<'getAccount'>['account'];
export type PersonalAccessToken = Out<'listPersonalAccessTokens'>['pats'][number];
export type NewPersonalAccessToken = Out<'createPersonalAccessToken'>['pat'];
export type Conversation = RuntimeOut<'getConversation'>['conversation'];
export type Message = RuntimeOut<'getMessage'>['message'];
export type BotEvent = RuntimeOut<'getEvent'>['event'];
export type BotPackage = NonNullable<Out<'getBotPackage'>['package']>;
export type FlowWorkflow = BotPackage['workflows'][string];
export type FlowNode = FlowWorkflow['nodes'][number];
export type FlowCard = NonNullable<FlowNode['cards']>[number];
export type BotDraft = Out<'getBotDraft'>['draft'];
export type DraftLayout = BotDraft['layout'];
export type PackageProblem = Out<'validateBotDraft'>['problems'][number];
export type BotLog = Out<'getBotLogs'>['logs'][number];
export type DraftTestTurn = Out<'listBotDraftTestTurns'>['turns'][number];
export type DraftTestStep = DraftTestTurn['steps'][number];
export type Role = Member['role'];
export type AnalyticsRecord = Out<'getBotAnalytics'>['records'][number];
export type AnalyticsInterval = AdminIn<'getBotAnalytics'>['interval'];
export type ChatMessage = ChatOut<'createMessage'>['message'];
export type BotWebhook = Out<'getBotWebhook'>['webhook'];
export type WebhookSubscription = Out<'listWebhookSubscriptions'>['subscriptions'][number];
