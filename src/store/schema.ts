import type { Generated, Insertable, Selectable } from 'kysely';
import type {
  Role,
  BotType,
  BotStatus,
  BotRuntime,
  MessageDirection,
  EventStatus,
  StateType,
  WorkflowStatus,
  BotLogLevel,
  BotLogCallKind,
  FileStatus,
  PassageType,
  WebhookVerification,
  WebhookSendStatus,
  EmbeddingJobStatus,
  EmbeddingKind,
  InstallationStatus,
  TableJobType,
  TableJobStatus,
  LlmModelSource,
  HandoffStatus,
  HandoffSource,
  HandoffAction,
  Visibility,
  PackageKind,
} from '../value-sets.ts';

/**
 * The tables, as both dialects store them: ids and timestamps (ISO 8601 UTC) are text, JSON documents
 * are text, flags are 0/1 integers. Columns that hold one of a closed set of values are typed with that
 * set (src/value-sets.ts).
 */

/**
 * Every table the Tables API creates for a table's rows is named so (`tbl_rows_<id>`); its columns change
 * while servers run, unlike those of the tables below, which change only by migration.
 */
export const ROW_TABLE_PREFIX = 'tbl_rows_';

/** What a chat id of a client's choosing names. */
export type ForeignKind = 'user' | 'conversation';

/** `writing` while an upload streams in, `stored` once a file holds it, `dead` when its bytes may be freed. */
export type BlobState = 'writing' | 'stored' | 'dead';

/** A boolean, as both dialects store it. */
export type Flag = 0 | 1;

export interface AccountsTable {
  id: string;
  email: string;
  display_name: string | null;
  profile_picture: string | null;
  created_at: string;
  updated_at: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  owner_id: string;
  handle: string | null;
  /** JSON: the optional public-profile fields (about, contactEmail, website, ...). */
  profile: string;
  spending_limit: number;
  /** US dollars a month that the workspace's model calls may cost; null: no cap. */
  ai_spend_limit: number | null;
  created_at: string;
  updated_at: string;
}

export interface WorkspaceMembersTable {
  id: string;
  workspace_id: string;
  account_id: string;
  role: Role;
  created_at: string;
}

export interface PersonalAccessTokensTable {
  id: string;
  account_id: string;
  note: string;
  token_hash: string;
  created_at: string;
}

export interface BotsTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  dev: Flag;
  type: BotType;
  status: BotStatus;
  signing_secret: string;
  created_by: string | null;
  deployed_at: string | null;
  /** JSON: the bot's definition (configuration, states, events, actions, integrations, ...). */
  definition: string;
  /** JSON: secret name -> value. Only the names ever leave the store through the API. */
  secrets: string;
  code: string | null;
  /** Which runtime runs `code`; null when nothing here runs it. */
  runtime: BotRuntime | null;
  /** 1 when its code takes `workflow_update` events (an SDK bundle whose SDK dispatches them). */
  workflow_updates: Flag;
  /** The version (bot_versions) it runs; null when it has no code. */
  version_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A bot's draft: the package source the console edits (domain/bots/bot-drafts.ts). */
export interface BotDraftsTable {
  bot_id: string;
  /** JSON: path in the package folder -> the file's text. */
  files: string;
  /** JSON: workflow -> node id -> { x, y }, where the author left the node. */
  layout: string;
  /** `compiled` when its code files came from a deployed package's compiled code. */
  code_from: 'sources' | 'compiled';
  /** The version it started from, or the one its last deploy made. */
  base_version_id: string | null;
  updated_by: string | null;
  updated_at: string;
}

/** A bot's draft twin: the bot, never listed, that runs its draft for the test panel (domain/bots/draft-tests.ts). */
export interface BotDraftTwinsTable {
  bot_id: string;
  twin_id: string;
}

/** What one turn of a draft twin ran, for the test panel. */
export interface DraftTestTurnsTable {
  event_id: string;
  /** The twin's id. */
  bot_id: string;
  conversation_id: string;
  message_id: string | null;
  /** JSON: the cards and transitions the turn ran, in order (DraftTestStep[]). */
  steps: string;
  /** JSON: the conversation, user and workflow variables after the turn. */
  variables: string;
  /** Why the turn failed; null when it ended. */
  error: string | null;
  created_at: string;
}

/** What one deploy of a bot's code deployed, never changed after (domain/bots/bot-versions.ts). */
export interface BotVersionsTable {
  id: string;
  bot_id: string;
  /** 1, 2, 3... in the order the bot's versions were made. */
  number: number;
  name: string;
  description: string | null;
  code: string;
  runtime: BotRuntime | null;
  /** JSON: the bot's definition as that deploy left it (as `bots.definition`). */
  definition: string;
  /** JSON: table name -> { schema, keyColumn }, the bot's tables when the version was made. */
  tables: string;
  /** The account that made it. */
  created_by: string | null;
  created_at: string;
}

export interface BotApiKeysTable {
  id: string;
  bot_id: string;
  note: string;
  token_hash: string;
  created_at: string;
  /** Set on the key of an integration's process: it acts for the bot as that integration. */
  integration_id: string | null;
  /** The installation (its alias) the key of an integration's process acts as; null on keys made before aliases. */
  integration_alias: string | null;
  /** Set on a key made for a bundle's process: the server process that made it (and deletes it). */
  process_owner: string | null;
}

/** Tags of any resource, one row per key, so both dialects can filter on them with an index. */
export interface TagsTable {
  resource_id: string;
  key: string;
  value: string;
}

export interface AnalyticsTable {
  id: string;
  bot_id: string;
  name: string;
  count: number;
  created_at: string;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface UsersTable {
  id: string;
  bot_id: string;
  name: string | null;
  picture_url: string | null;
  /** JSON: string map */
  properties: string;
  /** JSON: string map (deprecated in the wire protocol, kept for old clients) */
  attributes: string;
  created_at: string;
  updated_at: string;
}

export interface ConversationsTable {
  id: string;
  bot_id: string;
  channel: string;
  integration: string;
  /** JSON: string map */
  properties: string;
  message_count: number;
  /** The number of the conversation's last live signal. */
  signal_seq: Generated<number>;
  current_task_id: string | null;
  current_workflow_id: string | null;
  /** When its last event was queued: the least instant its next one may take (migration 0035). */
  last_event_at: Generated<string | null>;
  created_at: string;
  updated_at: string;
}

export interface ParticipantsTable {
  conversation_id: string;
  user_id: string;
  created_at: string;
}

export interface MessagesTable {
  id: string;
  bot_id: string;
  conversation_id: string;
  user_id: string;
  type: string;
  /** JSON object */
  payload: string;
  direction: MessageDirection;
  origin: 'synthetic' | null;
  /** The event whose turn sent it (a bot's reply); null for what no turn sent. */
  event_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface EventsTable {
  id: string;
  bot_id: string;
  /** Its bot's workspace (written by the insert, from the bot): whose share of the engine it takes. */
  workspace_id: string;
  type: string;
  /** JSON object */
  payload: string;
  conversation_id: string | null;
  user_id: string | null;
  message_id: string | null;
  workflow_id: string | null;
  status: EventStatus;
  failure_reason: string | null;
  /** When a scheduled event is due. */
  scheduled_for: string | null;
  /** The engine process working on this pending event, and until when its claim holds. */
  lease_owner: string | null;
  lease_until: string | null;
  /** Turns of this event that failed for a reason that may pass, and will be tried again. */
  attempts: Generated<number>;
  /** How many times the engine claimed it (a first claim has no earlier run to find replies of). */
  deliveries: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface StatesTable {
  id: string;
  bot_id: string;
  type: StateType;
  /** The id of what the state belongs to (conversation, user, bot, workflow, ...). */
  resource_id: string;
  name: string;
  /** JSON object */
  payload: string;
  /** Lifetime in milliseconds, as given. */
  expiry: number | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WorkflowsTable {
  id: string;
  bot_id: string;
  name: string;
  status: WorkflowStatus;
  /** JSON object */
  input: string;
  /** JSON object */
  output: string;
  parent_workflow_id: string | null;
  conversation_id: string | null;
  user_id: string | null;
  event_id: string | null;
  failure_reason: string | null;
  timeout_at: string;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ObservationsTable {
  id: string;
  bot_id: string;
  name: string;
  /** JSON: the whole observation as captured */
  data: string;
  created_at: string;
}

export interface BotWebhooksTable {
  bot_id: string;
  webhook_id: string;
  verification: WebhookVerification;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveriesTable {
  bot_id: string;
  /** The sender's name for the delivery (`webhook-id`, ...). */
  delivery_id: string;
  event_id: string;
  created_at: string;
}

export interface WebhookSubscriptionsTable {
  id: string;
  bot_id: string;
  url: string;
  /** JSON: the event types delivered (`*`: all). */
  event_types: string;
  description: string;
  /** Signs the deliveries (Standard Webhooks, `whsec_…`); shown once, at creation. */
  secret: string;
  last_status: WebhookSendStatus | null;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The columns of a queue of durable work whose rows are due at `next_attempt_at` while `pending`, and
 * claimed with a lease (`domain/shared/leased-rows.ts`).
 */
export interface LeasedWorkColumns {
  id: string;
  attempts: number;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookSendsTable extends LeasedWorkColumns {
  subscription_id: string;
  /** The JSON body, as signed. */
  body: string;
  status: WebhookSendStatus;
}

export interface IntegrationsTable {
  id: string;
  workspace_id: string;
  /** `handle/name`, as `bp deploy` names it. */
  name: string;
  version: string;
  /** JSON: what the definition declares (channels, actions, events, states, configuration, user...). */
  definition: string;
  /** The bundle `bp build` made; null for one registered without code. */
  code: string | null;
  /** JSON: its secrets' values (`SECRET_*` of its process). */
  secrets: string;
  /** Signs the requests handed to it, for handlers that verify them (`whsec_…`). */
  signing_secret: string;
  /** Who finds it: its workspace alone, or every workspace once the operator published it. */
  visibility: Visibility;
  created_at: string;
  updated_at: string;
}

/** Interfaces and plugins a workspace deployed. */
export interface PackagesTable {
  id: string;
  workspace_id: string;
  kind: PackageKind;
  name: string;
  version: string;
  /** JSON: the definition as `bp deploy` sent it (a plugin's dependencies resolved to ids). */
  definition: string;
  /** JSON: a plugin's bundles, `{ node, browser }`; null for an interface. */
  code: string | null;
  visibility: Visibility;
  created_at: string;
  updated_at: string;
}

/** An integration installed on a bot under an alias (what `<alias>:<action>` and `<alias>:<event>` name). */
export interface BotInstallationsTable {
  bot_id: string;
  alias: string;
  integration_id: string;
  enabled: number;
  /** JSON: the bot's configuration of the integration. */
  configuration: string;
  /** The integration's named configuration it uses (`configurations.<type>`); null: its default one. */
  configuration_type: string | null;
  /** JSON array: the integration's channels the bot does not use. */
  disabled_channels: string;
  webhook_id: string;
  status: InstallationStatus;
  status_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChannelSendsTable extends LeasedWorkColumns {
  bot_id: string;
  integration_id: string;
  /** The installation whose channel takes the message (null only on sends queued before aliases). */
  alias: string | null;
  message_id: string;
  status: WebhookSendStatus;
  last_error: string | null;
}

export interface ChatChannelsTable {
  bot_id: string;
  webhook_id: string;
  enabled: Flag;
  /** Set: personal mode (the bot owner signs user keys with it). Null: shared mode. */
  encryption_key: string | null;
  /** JSON: the origins allowed to call the channel's routes from a browser; null: any origin. */
  allowed_origins: string | null;
  /** JSON object: how the channel's webchat looks (bot name, avatar, colour...). */
  webchat: string;
  /** JSON `{ enabled, text? }`: what a visitor reads when a turn fails; null: the default (on). */
  fallback_message: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChatIdsTable {
  bot_id: string;
  kind: ForeignKind;
  foreign_id: string;
  internal_id: string;
}

/**
 * A view on SQLite only (migration 0039), written to, never read: a row inserted is the message and,
 * with a frame, its live signal `signal_seq`, in one statement (PostgreSQL writes both with CTEs). It
 * lists the columns of `messages`: a column added to that table is added to the view and its trigger.
 */
export interface MessageWritesView extends MessagesTable {
  signal_seq: number | null;
  signal_frame: string | null;
}

/**
 * A view on SQLite only (migration 0040), written to, never read: a row inserted is a bot's reply in a
 * conversation of `integration`, counted in it, stored and signalled (numbered by the count) in one
 * statement, as PostgreSQL's CTEs write it; nothing when the conversation is another's. It lists the
 * columns of `messages`: a column added to that table is added to the view and its trigger.
 */
export interface ChatReplyWritesView extends MessagesTable {
  /** The integration whose conversation it must be (the bot's reply is written only there). */
  integration: string;
  signal_frame: string;
}

/**
 * A view on SQLite only (migration 0039), written to, never read: a row inserted is a state a turn wrote
 * last (upserted as `States.write` does) and, where `ends_event` is set, the end of that event. It lists
 * the columns of `states`: a column added to that table is added to the view and its trigger.
 */
export interface StateWritesView extends StatesTable {
  ends_event: string | null;
  ends_status: 'processed' | 'ignored' | null;
}

export interface ConversationSignalsTable {
  conversation_id: string;
  seq: number;
  /** The SSE `data:` of the signal, ready to write. */
  frame: string;
  created_at: string;
}

export interface ActionCacheTable {
  bot_id: string;
  key: string;
  /** JSON: the action's output */
  output: string;
  expires_at: string;
}

/** A model call of a bot through the gateway. */
export interface LlmCallsTable {
  id: string;
  bot_id: string;
  workspace_id: string;
  created_at: string;
  /** `provider:model`, the model that answered or, for a failed call, the last one tried. */
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** US dollars, from the operator's prices (0 without one). */
  cost: number;
  latency_ms: number;
  /** Why the call failed; null when it was answered. */
  error: string | null;
}

/** An OpenAI-compatible provider of a workspace's own. */
export interface LlmProvidersTable {
  id: string;
  workspace_id: string;
  /** Unique in its workspace: `<name>:<model>` routes to it. */
  name: string;
  /** Ends before `/chat/completions`. */
  base_url: string;
  /** Sent as `Authorization: Bearer`; never in an answer. */
  api_key: string | null;
  /** JSON: the model ids it serves. */
  models: string;
  models_from: LlmModelSource;
  /** JSON: model id -> `{ input, output }`, US dollars per million tokens. */
  prices: string;
  created_at: string;
  updated_at: string;
}

/** The models a bot chose for `best` and `fast`, as `<provider>:<model>`; null: the server's. */
export interface BotLlmModelsTable {
  bot_id: string;
  best: string | null;
  fast: string | null;
  updated_at: string;
}

/** One log line of a bot. */
export interface BotLogsTable {
  id: string;
  bot_id: string;
  /** ISO 8601 UTC, when the line was logged. */
  timestamp: string;
  level: BotLogLevel;
  message: string;
  conversation_id: string | null;
  user_id: string | null;
  workflow_id: string | null;
  /** The event whose turn logged it; null for lines of no turn. */
  event_id: string | null;
  /** A line about a model or tool call of the turn, and how long the call took. */
  call_kind: BotLogCallKind | null;
  call_ms: number | null;
}

export interface FilesTable {
  id: string;
  bot_id: string;
  /** `bot`, or `integration:<alias>`: whoever created the file; a key is unique per owner. */
  owner: string;
  key: string;
  content_type: string;
  /** Bytes, as declared by the upsert (and as stored, once the upload completed). */
  size: number;
  /** Hex SHA-256 of the stored content (the download's ETag). */
  sha256: string | null;
  blob_id: string | null;
  /** Changes with every upsert: an upload URL signed for an earlier one no longer works. */
  upload_nonce: string;
  status: FileStatus;
  failure_reason: string | null;
  index_requested: Flag;
  /** JSON: `indexing.configuration` as given (stored for reference). */
  indexing_config: string | null;
  indexing_stack: 'v1' | 'v2' | null;
  /** JSON: FileAccessPolicy[] */
  access_policies: string;
  /** JSON object */
  metadata: string;
  expires_at: string | null;
  /** JSON: the passages setFilePassages gave, until the indexer stores them. */
  pending_passages: string | null;
  /** The indexer process working on this file, and until when its claim holds. */
  index_lease_owner: string | null;
  index_lease_until: string | null;
  /** Claims of this indexing so far: a file whose indexing keeps dying is given up. */
  index_attempts: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface FilePassagesTable {
  id: string;
  file_id: string;
  position: number;
  type: PassageType;
  page_number: number | null;
  content: string;
}

/** A passage's embedding by one model: unit length, little-endian float32 bytes. */
export interface PassageVectorsTable {
  passage_id: string;
  file_id: string;
  model: string;
  dimension: number;
  vector: Uint8Array;
  /** The hash of the text embedded (the passage under its headings). */
  content_hash: string;
  /** What the vector indexes compare first (vectors/signature.ts); null for a vector of no dimension. */
  signature: Uint8Array | null;
}

/** A table row's embedding by one model (of its searchable text), as a passage's. */
export interface RowVectorsTable {
  table_id: string;
  row_id: number;
  model: string;
  /** 0 for a row without searchable text (nothing was embedded). */
  dimension: number;
  vector: Uint8Array;
  content_hash: string;
  signature: Uint8Array | null;
}

/** A file whose passages, or a table whose rows, wait to be embedded with `model` (its id is theirs). */
export interface EmbeddingJobsTable extends LeasedWorkColumns {
  kind: EmbeddingKind;
  bot_id: string;
  model: string;
  status: EmbeddingJobStatus;
  last_error: string | null;
}

export interface KnowledgeBasesTable {
  id: string;
  bot_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface FileBlobsTable {
  id: string;
  bot_id: string;
  state: BlobState;
  size: number;
  created_at: string;
}

export interface FileBlobChunksTable {
  blob_id: string;
  seq: number;
  data: Uint8Array;
}

/** The full-text index (SQLite: a rowid per entry, the text in the FTS5 table `search_fts`). */
export interface SearchEntriesTable {
  rowid: Generated<number>;
  id: string;
  /** What a search is limited to: a passage's file, a table row's table. */
  scope: string;
}

export interface TablesTable {
  id: string;
  bot_id: string;
  name: string;
  /** The columns (src/domain/tables/columns.ts), JSON. */
  columns: string;
  factor: number;
  frozen: number;
  key_column: string | null;
  tags: string;
  compute_enabled: number;
  /** The SQL table of its rows. */
  storage: string;
  /** How many of its columns are computed by code. */
  code_columns: Generated<number>;
  next_position: number;
  created_at: string;
  updated_at: string;
}

export interface TableJobsTable {
  id: string;
  bot_id: string;
  table_id: string;
  type: TableJobType;
  status: TableJobStatus;
  progress: number | null;
  input_file_id: string | null;
  output_file_id: string | null;
  /** The job's own arguments (format, filter...), JSON. */
  options: string;
  failure_reason: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  attempts: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** A conversation a bot handed to a person (domain/handoffs/). */
export interface HandoffsTable {
  id: string;
  workspace_id: string;
  bot_id: string;
  conversation_id: string;
  /** The visitor: the conversation's user the bot handed over. */
  user_id: string | null;
  reason: string;
  /** The team or tag the handoff is routed to; null: anyone's. */
  team: string | null;
  source: HandoffSource;
  status: HandoffStatus;
  /** The agent's account (a member of the workspace) and the bot's user that stands for them. */
  agent_id: string | null;
  agent_user_id: string | null;
  assigned_at: string | null;
  /** When a handoff still pending times out; null: never. */
  timeout_at: string | null;
  /** Where the bot resumes (a node of the card's workflow) when it is resolved, or times out; null: the card after. */
  on_resolved: string | null;
  on_timeout: string | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  timed_out_at: string | null;
  /** The agent-side conversation (the `hitl` channel's) of a handoff the `hitl` integration opened; null: none. */
  hitl_conversation_id: string | null;
}

/** What happened to a handoff, and which account did it (null: the bot, or the server's timeout). */
export interface HandoffEventsTable {
  id: string;
  handoff_id: string;
  action: HandoffAction;
  account_id: string | null;
  /** JSON: the action's details (the agent a handoff was transferred to, the message sent...). */
  detail: string;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  workspaces: WorkspacesTable;
  workspace_members: WorkspaceMembersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  bots: BotsTable;
  bot_versions: BotVersionsTable;
  bot_drafts: BotDraftsTable;
  bot_draft_twins: BotDraftTwinsTable;
  draft_test_turns: DraftTestTurnsTable;
  bot_api_keys: BotApiKeysTable;
  tags: TagsTable;
  analytics: AnalyticsTable;
  settings: SettingsTable;
  users: UsersTable;
  conversations: ConversationsTable;
  participants: ParticipantsTable;
  messages: MessagesTable;
  events: EventsTable;
  states: StatesTable;
  workflows: WorkflowsTable;
  observations: ObservationsTable;
  chat_channels: ChatChannelsTable;
  bot_webhooks: BotWebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_sends: WebhookSendsTable;
  integrations: IntegrationsTable;
  bot_installations: BotInstallationsTable;
  packages: PackagesTable;
  channel_sends: ChannelSendsTable;
  chat_ids: ChatIdsTable;
  conversation_signals: ConversationSignalsTable;
  message_writes: MessageWritesView;
  chat_reply_writes: ChatReplyWritesView;
  state_writes: StateWritesView;
  bot_logs: BotLogsTable;
  action_cache: ActionCacheTable;
  llm_calls: LlmCallsTable;
  llm_providers: LlmProvidersTable;
  handoffs: HandoffsTable;
  handoff_events: HandoffEventsTable;
  bot_llm_models: BotLlmModelsTable;
  files: FilesTable;
  file_passages: FilePassagesTable;
  passage_vectors: PassageVectorsTable;
  row_vectors: RowVectorsTable;
  embedding_jobs: EmbeddingJobsTable;
  knowledge_bases: KnowledgeBasesTable;
  file_blobs: FileBlobsTable;
  file_blob_chunks: FileBlobChunksTable;
  search_entries: SearchEntriesTable;
  tables: TablesTable;
  table_jobs: TableJobsTable;
}

/** A row as read from a table. */
export type Row<T extends keyof Database> = Selectable<Database[T]>;
/** A row as written to a table. */
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
