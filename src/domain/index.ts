import { TurnRecordsReader } from './runtime/turn-records.ts';
import type { BotLogProblem } from './bots/bot-log-buffer.ts';
import type { Store } from '../store/index.ts';
import { Accounts } from './workspace/accounts.ts';
import { Caches } from './shared/caches.ts';
import { Settings } from './shared/settings.ts';
import { Actions } from './runtime/actions.ts';
import { OutputCache } from './shared/output-cache.ts';
import { LlmGateway } from './llm/gateway.ts';
import type { LlmOptions } from './llm/providers.ts';
import { BotModels } from './llm/bot-models.ts';
import { LlmProviders, UNREACHABLE_TARGETS } from './llm/workspace-providers.ts';
import type { TenantTargets } from './llm/workspace-providers.ts';
import { LlmIntegration } from './llm/llm-integration.ts';
import { LlmUsage } from './llm/usage.ts';
import { AiSpend } from './llm/spend.ts';
import { AudioSource } from './llm/audio-source.ts';
import { Transcriptions } from './llm/transcription.ts';
import { Embeddings } from './llm/embeddings.ts';
import { EmbeddingQueue } from './embeddings/queue.ts';
import { Analytics } from './runtime/analytics.ts';
import { Auth } from './workspace/auth.ts';
import { BotAnalytics } from './bots/bot-analytics.ts';
import { BotKeys } from './bots/bot-keys.ts';
import { BotLogs } from './bots/bot-logs.ts';
import { BotVersions } from './bots/bot-versions.ts';
import { Bots } from './bots/bots.ts';
import { ChannelSends } from './integrations/channel-sends.ts';
import { IntegrationHostSlot } from './integrations/host.ts';
import { DevTunnels } from './bots/dev-tunnels.ts';
import { SdkRuntimeSlot } from './bots/bot-code.ts';
import type { PackageCheck } from './bots/bot-code.ts';
import { BotDrafts } from './bots/bot-drafts.ts';
import { DraftTests } from './bots/draft-tests.ts';
import type { PackageBuilder } from './bots/bot-drafts.ts';
import { Installations } from './integrations/installations.ts';
import { ProactiveCreation } from './integrations/proactive.ts';
import { Integrations } from './integrations/integrations.ts';
import { Publishing } from './integrations/publishing.ts';
import { Interfaces } from './packages/interfaces.ts';
import { PackageStore } from './packages/package-store.ts';
import { Plugins } from './packages/plugins.ts';
import type { DependencyLookup } from './packages/plugins.ts';
import { Operator } from './workspace/operator.ts';
import { Conversations } from './runtime/conversations.ts';
import { Events } from './runtime/events.ts';
import { EventQueue } from './queue/event-queue.ts';
import { BacklogQuota } from './queue/backlog-quota.ts';
import { Admission } from './queue/admission.ts';
import type { AdmissionListener, AdmissionOptions } from './queue/admission.ts';
import { Members } from './workspace/members.ts';
import { Messages } from './runtime/messages.ts';
import { Chat } from './chat/chat.ts';
import { ChatChannels } from './chat/channels.ts';
import { FallbackReplies } from './chat/fallback-replies.ts';
import { ForeignIds } from './chat/foreign-ids.ts';
import { Links } from './bots/links.ts';
import { ConversationLog } from './live/conversation-log.ts';
import type { LiveBus } from './live/conversation-log.ts';
import { States } from './runtime/states.ts';
import { Users } from './runtime/users.ts';
import { TagValues } from './runtime/tag-values.ts';
import { Workflows } from './runtime/workflows.ts';
import { WorkflowUpdates } from './runtime/workflow-updates.ts';
import { Workspaces } from './workspace/workspaces.ts';
import { Handoffs } from './handoffs/handoffs.ts';
import { HitlIntegration } from './handoffs/hitl-integration.ts';
import { Webchat } from './webchat/webchat.ts';
import { BotWebhooks } from './webhooks/bot-webhooks.ts';
import { WebhookIngress } from './webhooks/ingress.ts';
import { WebhookSends } from './webhooks/sends.ts';
import { WebhookSubscriptions } from './webhooks/subscriptions.ts';
import { createFilesDomain, DEFAULT_FILES_OPTIONS } from './files/index.ts';
import type { FilesDomain, FilesOptions } from './files/index.ts';
import type { SearchFallback } from './embeddings/ranking.ts';
import { createTablesDomain } from './tables/index.ts';
import type { TablesDomain } from './tables/index.ts';

/** Every domain service, wired to one store. The API, the engine and the CLI all go through these. */
import type { SearchRanking } from '../value-sets.ts';
export interface Domain extends FilesDomain, TablesDomain {
  /** Throws when the store cannot answer (readiness). */
  ping(): Promise<void>;
  accounts: Accounts;
  workspaces: Workspaces;
  members: Members;
  bots: Bots;
  botVersions: BotVersions;
  /** Bots' drafts: the package source the console edits, validated and deployed. */
  botDrafts: BotDrafts;
  draftTests: DraftTests;
  integrations: Integrations;
  /** Interfaces and plugins workspaces deploy, and the hub's of them (published by the operator). */
  interfaces: Interfaces;
  plugins: Plugins;
  installations: Installations;
  integrationHost: IntegrationHostSlot;
  /** The tunnels `bp dev` opened to this process, through which dev bots are called. */
  devTunnels: DevTunnels;
  /** Whether SDK bundles run here (the engine says). */
  sdkRuntime: SdkRuntimeSlot;
  proactive: ProactiveCreation;
  channelSends: ChannelSends;
  botKeys: BotKeys;
  botLogs: BotLogs;
  botAnalytics: BotAnalytics;
  auth: Auth;
  analytics: Analytics;
  users: Users;
  conversations: Conversations;
  messages: Messages;
  events: Events;
  states: States;
  /** What a turn reads before it runs, at once. */
  turnRecords: TurnRecordsReader;
  workflows: Workflows;
  tagValues: TagValues;
  foreignIds: ForeignIds;
  log: ConversationLog;
  channels: ChatChannels;
  /** What a visitor reads when the turn of their message fails for good. */
  fallbackReplies: FallbackReplies;
  links: Links;
  chat: Chat;
  webchat: Webchat;
  botWebhooks: BotWebhooks;
  webhookIngress: WebhookIngress;
  webhookSubscriptions: WebhookSubscriptions;
  webhookSends: WebhookSends;
  /** Human handoffs: conversations bots hand to people, who answer them through the Admin API. */
  handoffs: Handoffs;
  queue: EventQueue;
  /** Admission control of new messages (undefined: off); the engine tells it how its turns go. */
  admission: Admission | undefined;
  actions: Actions;
  /** Outputs kept for a while: cached actions and model answers. */
  outputs: OutputCache;
  llm: LlmGateway;
  /** The record of model calls: the server's stop waits for those under way. */
  llmUsage: LlmUsage;
  /** Embedding files' passages and tables' rows off their writes (when an embedding model is configured). */
  embedding: EmbeddingQueue;
  /** Workspaces' own model providers, and bots' choices of `best` and `fast`. */
  llmProviders: LlmProviders;
  botModels: BotModels;
  /** `transcribe-audio`: speech to text through the server's provider. */
  transcriptions: Transcriptions;
  aiSpend: AiSpend;
  settings: Settings;
}

export interface DomainOptions {
  /** The bot package format a deploy of Parley code is checked against (`package/compiled.ts`). */
  checkPackage: PackageCheck;
  /** Validates, compiles and reads the sources of packages for bots' drafts (`package/draft-builder.ts`). */
  packageBuilder: PackageBuilder;
  /** The secret of shared-mode chat keys; undefined: generated once and kept in the store. */
  chatSecret?: string;
  /** Where file contents live and how large they may be (the defaults of the settings when absent). */
  files?: FilesOptions;
  /** Outgoing webhooks, and audio URLs to transcribe, may reach non-public addresses (off when absent). */
  webhookPrivateTargets?: boolean;
  /** Pending events a workspace may have before more from outside are refused (no limit when absent). */
  workspaceBacklog?: number;
  /** Admission control of new messages by the engines' backlog (every one admitted when absent). */
  admission?: AdmissionOptions & { onDecision?: AdmissionListener };
  /** The model provider of bots' LLM calls (none configured when absent). */
  llm?: LlmOptions;
  /** How workspaces' model providers are reached (none are when absent: a one-off command's domain). */
  llmTargets?: TenantTargets;
  /** How searches rank once an embedding model is configured (`hybrid` when absent). */
  searchRanking?: SearchRanking;
  /** Told of each search that answered by words alone, its query not embedded (ignored when absent). */
  onSearchFallback?: (fallback: SearchFallback) => void;
  /** Told of bot log lines the store did not take at once (ignored when absent: a one-off command's). */
  onBotLogProblem?: (problem: BotLogProblem) => void;
}

const NO_LLM: LlmOptions = { provider: undefined, deadlineMs: 120_000, prices: {} };

export function createDomain(store: Store, bus: LiveBus, options: DomainOptions): Domain {
  const { db } = store;
  const caches = new Caches();
  const foreignIds = new ForeignIds();
  const log = new ConversationLog(store, foreignIds, bus);
  const settings = new Settings(db);
  const channels = new ChatChannels(db, settings, caches);
  const links = new Links();
  const llmUsage = new LlmUsage(store);
  const aiSpend = new AiSpend(store, llmUsage);
  // One queue of embedding work for files and tables, with the server provider's embedding model.
  const embedding = new EmbeddingQueue(store, new Embeddings(options.llm ?? NO_LLM, llmUsage, aiSpend));
  const onFallback = options.onSearchFallback ?? (() => undefined);
  const semantic = { embedding, onFallback, ranking: options.searchRanking ?? 'hybrid' };
  const files = createFilesDomain(store, settings, links, options.files ?? DEFAULT_FILES_OPTIONS, semantic);
  const accounts = new Accounts(db, caches);
  const members = new Members(db, accounts, caches);
  const users = new Users(store);
  const conversations = new Conversations(store, users, log);
  const queue = new EventQueue(store);
  const admission =
    options.admission && new Admission(options.admission, store.turnDb, options.admission.onDecision);
  const webhookSubscriptions = new WebhookSubscriptions(db, options.webhookPrivateTargets ?? false);
  const events = new Events(
    store,
    log,
    queue,
    webhookSubscriptions,
    new BacklogQuota(options.workspaceBacklog),
    admission,
  );
  const workflows = new Workflows(store, new WorkflowUpdates(events));
  events.useWorkflows(workflows);
  const channelSends = new ChannelSends(store);
  const messages = new Messages(store, users, conversations, events, log, channelSends);
  const botWebhooks = new BotWebhooks(db, links);
  const installations = new Installations(db, links);
  const sdkRuntime = new SdkRuntimeSlot(options.checkPackage);
  const publishing = new Publishing(new Operator(db));
  const interfaces = new Interfaces(new PackageStore(db, 'interface', 'Interface', publishing));
  const interfacesVisibleTo: DependencyLookup = (workspaceId, ref) => interfaces.visibleTo(workspaceId, ref);
  const integrations = new Integrations(db, sdkRuntime, publishing, interfacesVisibleTo);
  const plugins = new Plugins(new PackageStore(db, 'plugin', 'Plugin', publishing), {
    interfaces: interfacesVisibleTo,
    integrations: (workspaceId, ref) => integrations.visibleTo(workspaceId, ref),
  });
  const integrationHost = new IntegrationHostSlot();
  const states = new States(store, events, queue);
  const outputs = new OutputCache(store);
  const llmProviders = new LlmProviders(db, options.llmTargets ?? UNREACHABLE_TARGETS);
  // The catalog of models a bot may choose is the gateway's, which routes by the bots' choices.
  const botModels: BotModels = new BotModels(db, (workspaceId) => llm.catalog(workspaceId));
  const llm: LlmGateway = new LlmGateway(
    options.llm ?? NO_LLM,
    outputs,
    llmUsage,
    aiSpend,
    llmProviders,
    botModels,
  );
  const transcriptions = new Transcriptions(
    options.llm ?? NO_LLM,
    new AudioSource(links, files.fileContents, options.webhookPrivateTargets ?? false),
    outputs,
    llmUsage,
    aiSpend,
  );
  const llmIntegration = new LlmIntegration(llm);
  const chat = new Chat(
    { store, caches, channels, ids: foreignIds, users, conversations, messages, events, log },
    options.chatSecret,
  );
  const bots = new Bots(
    store,
    channels,
    botWebhooks,
    links,
    caches,
    installations,
    sdkRuntime,
    llmIntegration,
  );
  llmIntegration.useAliases((botId) => bots.llmAliases(botId));
  const handoffs = new Handoffs(store, events, messages, users, conversations, members, log);
  const hitlIntegration = new HitlIntegration(store, users, conversations, handoffs);
  const botDrafts = new BotDrafts(db, bots, options.packageBuilder);
  const botLogs = new BotLogs(store, options.onBotLogProblem ?? (() => undefined));
  return {
    ping: () => store.ping(),
    accounts,
    workspaces: new Workspaces(db, caches),
    members,
    bots,
    sdkRuntime,
    integrations,
    interfaces,
    plugins,
    installations,
    integrationHost,
    devTunnels: new DevTunnels(),
    proactive: new ProactiveCreation(installations, integrations, conversations, users, integrationHost),
    channelSends,
    botKeys: new BotKeys(db, caches, store.sql),
    botVersions: new BotVersions(db),
    botDrafts,
    draftTests: new DraftTests(db, bots, botDrafts, options.packageBuilder, botLogs),
    botLogs,
    botAnalytics: new BotAnalytics(store, llmUsage),
    auth: new Auth(db, members, caches),
    analytics: new Analytics(db),
    users,
    conversations,
    messages,
    events,
    states,
    turnRecords: new TurnRecordsReader(store, messages, conversations, users, states),
    workflows,
    tagValues: new TagValues(store),
    foreignIds,
    log,
    channels,
    fallbackReplies: new FallbackReplies(channels, messages),
    links,
    chat,
    webchat: new Webchat({ store, chat, ids: foreignIds, users, messages, events, log }),
    botWebhooks,
    webhookIngress: new WebhookIngress(store, botWebhooks, installations, events, integrationHost),
    webhookSubscriptions,
    webhookSends: new WebhookSends(store),
    handoffs,
    queue,
    admission,
    actions: new Actions(store, log, outputs, llmIntegration, hitlIntegration),
    outputs,
    llm,
    llmUsage,
    llmProviders,
    botModels,
    transcriptions,
    aiSpend,
    settings,
    ...files,
    embedding,
    ...createTablesDomain(store, files.fileContents, semantic),
  };
}
