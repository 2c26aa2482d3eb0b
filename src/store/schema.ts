/**
 * The tables, as both dialects store them: ids and timestamps (ISO 8601 UTC) are text,
 * JSON documents are text, booleans are 0/1 integers. The repositories convert at the edge.
 */
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
  created_at: string;
  updated_at: string;
}

export interface WorkspaceMembersTable {
  id: string;
  workspace_id: string;
  account_id: string;
  role: string;
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
  dev: number;
  type: string;
  status: string;
  signing_secret: string;
  created_by: string | null;
  deployed_at: string | null;
  /** JSON: the bot's definition (configuration, states, events, actions, integrations, ...). */
  definition: string;
  /** JSON: secret name -> value. Only the names ever leave the store through the API. */
  secrets: string;
  code: string | null;
  /** 'parley' when `code` is a Parley bot package the engine runs; null otherwise. */
  runtime: string | null;
  created_at: string;
  updated_at: string;
}

export interface BotApiKeysTable {
  id: string;
  bot_id: string;
  note: string;
  token_hash: string;
  created_at: string;
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
  signal_seq: number;
  current_task_id: string | null;
  current_workflow_id: string | null;
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
  direction: string;
  origin: string | null;
  /** JSON object given by Chat API clients, or null. */
  metadata: string | null;
  created_at: string;
  updated_at: string;
}

export interface EventsTable {
  id: string;
  bot_id: string;
  type: string;
  /** JSON object */
  payload: string;
  conversation_id: string | null;
  user_id: string | null;
  message_id: string | null;
  workflow_id: string | null;
  status: string;
  failure_reason: string | null;
  /** When a scheduled event is due. */
  scheduled_for: string | null;
  /** The engine process working on this pending event, and until when its claim holds. */
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface StatesTable {
  id: string;
  bot_id: string;
  type: string;
  /** The id of what the state belongs to (conversation, user, bot, workflow, ...). */
  resource_id: string;
  name: string;
  /** JSON object */
  payload: string;
  /** Lifetime in milliseconds, as given (bigint: Postgres returns it as a string). */
  expiry: number | string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WorkflowsTable {
  id: string;
  bot_id: string;
  name: string;
  status: string;
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

export interface ChatChannelsTable {
  bot_id: string;
  webhook_id: string;
  enabled: number;
  /** Set: personal mode (the bot owner signs user keys with it). Null: shared mode. */
  encryption_key: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChatIdsTable {
  bot_id: string;
  kind: string;
  foreign_id: string;
  internal_id: string;
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

/** One log line of a bot. `level`: debug, info, warn or error. */
export interface BotLogsTable {
  id: string;
  bot_id: string;
  /** ISO 8601 UTC, when the line was logged. */
  timestamp: string;
  level: string;
  message: string;
  conversation_id: string | null;
  user_id: string | null;
  workflow_id: string | null;
}

export interface Database {
  accounts: AccountsTable;
  workspaces: WorkspacesTable;
  workspace_members: WorkspaceMembersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  bots: BotsTable;
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
  chat_ids: ChatIdsTable;
  conversation_signals: ConversationSignalsTable;
  bot_logs: BotLogsTable;
  action_cache: ActionCacheTable;
}
