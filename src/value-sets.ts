/**
 * The closed sets of values some columns hold, each defined here once: the store types its rows with
 * them (store/schema.ts), and the domain's and the contract's schemas enumerate them. A module of its
 * own, below the store and importing nothing, so that the contract reads them without the store.
 */

/**
 * Workspace roles, lowest to highest: the hosted product's, and Parley's `agent` (reads like a viewer,
 * and answers human handoffs, but changes no bot). `billing` reads like a viewer.
 */
export const ROLES = [
  'viewer',
  'billing',
  'agent',
  'developer',
  'manager',
  'administrator',
  'owner',
] as const;
export type Role = (typeof ROLES)[number];

export const BOT_TYPES = ['studio', 'adk', 'desk'] as const;
export type BotType = (typeof BOT_TYPES)[number];

export const BOT_STATUSES = ['active', 'deploying', 'deleting'] as const;
export type BotStatus = (typeof BOT_STATUSES)[number];

/**
 * The runtimes that can run a bot's uploaded code here: `parley` for a compiled Parley bot package (the
 * engine's sandbox), `botpress-sdk` for a bundle built by `bp build` (a process of its own).
 */
export const BOT_RUNTIMES = ['parley', 'botpress-sdk'] as const;
export type BotRuntime = (typeof BOT_RUNTIMES)[number];

export const MESSAGE_DIRECTIONS = ['incoming', 'outgoing'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];

export const EVENT_STATUSES = ['pending', 'processed', 'ignored', 'failed', 'scheduled', 'canceled'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const STATE_TYPES = ['conversation', 'user', 'bot', 'integration', 'workflow', 'task'] as const;
export type StateType = (typeof STATE_TYPES)[number];

export const WORKFLOW_STATUSES = [
  'pending',
  'in_progress',
  'listening',
  'paused',
  'completed',
  'cancelled',
  'failed',
  'timedout',
] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const BOT_LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type BotLogLevel = (typeof BOT_LOG_LEVELS)[number];

/** What a bot's log line about a call of its turn tells of: a model's answer, or a tool the model called. */
export const BOT_LOG_CALL_KINDS = ['model', 'tool'] as const;
export type BotLogCallKind = (typeof BOT_LOG_CALL_KINDS)[number];

export const FILE_STATUSES = [
  'upload_pending',
  'upload_failed',
  'upload_completed',
  'indexing_pending',
  'indexing_failed',
  'indexing_completed',
] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export const FILE_ACCESS_POLICIES = ['integrations', 'public_content'] as const;
export type FileAccessPolicy = (typeof FILE_ACCESS_POLICIES)[number];

/** What a passage of a document is, by its structure. */
export const PASSAGE_TYPES = [
  'title',
  'subtitle',
  'paragraph',
  'blockquote',
  'list',
  'table',
  'code',
  'image',
] as const;
export type PassageType = (typeof PASSAGE_TYPES)[number];

/** How the ingress checks a request before it queues it: its signature, or nothing (the bot checks). */
export const WEBHOOK_VERIFICATIONS = ['standard-webhooks', 'none'] as const;
export type WebhookVerification = (typeof WEBHOOK_VERIFICATIONS)[number];

/** How a subscription's last delivery went: taken, being tried again, or given up. */
export const WEBHOOK_SEND_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookSendStatus = (typeof WEBHOOK_SEND_STATUSES)[number];

/** A file's or a table's embedding work: waiting (or due again after a backoff), or given up. */
export const EMBEDDING_JOB_STATUSES = ['pending', 'failed'] as const;
export type EmbeddingJobStatus = (typeof EMBEDDING_JOB_STATUSES)[number];

/** What an embedding job embeds: a file's passages, or a table's rows. */
export const EMBEDDING_KINDS = ['file', 'table'] as const;
export type EmbeddingKind = (typeof EMBEDDING_KINDS)[number];

/** Whether an installation's `register` was answered. */
export const INSTALLATION_STATUSES = ['registration_pending', 'registered', 'registration_failed'] as const;
export type InstallationStatus = (typeof INSTALLATION_STATUSES)[number];

/** The Tables API's job types, as the hosted API answers them (Parley runs exports and imports). */
export const TABLE_JOB_TYPES = [
  'export',
  'import',
  'duplicate_table',
  'delete_rows',
  'clear_column',
  'clear_vectors',
] as const;
export type TableJobType = (typeof TABLE_JOB_TYPES)[number];

export const TABLE_JOB_STATUSES = ['pending', 'in_progress', 'finalizing', 'completed', 'failed'] as const;
export type TableJobStatus = (typeof TABLE_JOB_STATUSES)[number];

/** Where a workspace provider's model list comes from: declared by its maker, or read from its `GET /models`. */
export const LLM_MODEL_SOURCES = ['declared', 'provider'] as const;
export type LlmModelSource = (typeof LLM_MODEL_SOURCES)[number];

/**
 * A human handoff's life: waiting for an agent, taken by one, closed (by the agent or the bot), or
 * closed because no agent took it in time.
 */
export const HANDOFF_STATUSES = ['pending', 'assigned', 'resolved', 'timed_out'] as const;
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];

/** The statuses of a handoff still open: the visitor's messages go to the agent, not to the bot's workflows. */
export const OPEN_HANDOFF_STATUSES = ['pending', 'assigned'] as const satisfies readonly HandoffStatus[];

/** What opened a handoff: a Parley bot's `handoff` card, or a call of the built-in `hitl` integration. */
export const HANDOFF_SOURCES = ['card', 'hitl'] as const;
export type HandoffSource = (typeof HANDOFF_SOURCES)[number];

/** What happened to a handoff, each recorded with who did it (an agent's account, or none: the bot). */
export const HANDOFF_ACTIONS = [
  'started',
  'assigned',
  'transferred',
  'message',
  'resolved',
  'timed_out',
] as const;
export type HandoffAction = (typeof HANDOFF_ACTIONS)[number];

/** How searchFiles and findTableRows rank (PARLEY_SEARCH_RANKING): both ways fused, by words, by meaning. */
export const SEARCH_RANKINGS = ['hybrid', 'words', 'meaning'] as const;
export type SearchRanking = (typeof SEARCH_RANKINGS)[number];

/** How searches by meaning find their candidates: the store's vector index where it has one, or every vector. */
export const VECTOR_INDEX_CHOICES = ['auto', 'exact'] as const;
export type VectorIndexChoice = (typeof VECTOR_INDEX_CHOICES)[number];

/**
 * Who finds an integration, interface or plugin: its workspace alone (`private`), or, once the server's
 * operator published it, every workspace through the hub's lookups (`public` listed, `unlisted` not).
 */
export const VISIBILITIES = ['private', 'public', 'unlisted'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** What a row of `packages` is: an interface or a plugin (integrations have their own table). */
export const PACKAGE_KINDS = ['interface', 'plugin'] as const;
export type PackageKind = (typeof PACKAGE_KINDS)[number];
