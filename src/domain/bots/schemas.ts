import { Type } from 'typebox';
import type { Static } from 'typebox';
import {
  JsonObject,
  MAX_TIMEOUT_MS,
  Nullable,
  NullableMap,
  TagChangeMap,
  TagDefinitions,
  TagMap,
  Timestamp,
} from '../shared/schemas.ts';
import { BOT_LOG_CALL_KINDS, BOT_RUNTIMES, BOT_STATUSES } from '../../value-sets.ts';

// The records of bots as the Admin API answers them (a bot, its logs, its analytics) and what changes
// them: a module without the store, so the contract declares the Admin API with them.

const BotType = Type.Union([Type.Literal('studio'), Type.Literal('adk'), Type.Literal('desk')]);

export const Media = Type.Object({ url: Type.String(), name: Type.String() });

export const StateDefinition = Type.Object({
  type: Type.Union([Type.Literal('conversation'), Type.Literal('user'), Type.Literal('bot')]),
  schema: JsonObject,
  expiry: Type.Optional(Type.Number()),
});

export const EventDefinition = Type.Object({
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  schema: JsonObject,
  attributes: Type.Optional(TagMap),
});

export const RecurringEventDefinition = Type.Object({
  schedule: Type.Object({ cron: Type.String() }),
  type: Type.String(),
  payload: JsonObject,
});

export const ActionDefinition = Type.Object({
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  billable: Type.Optional(Type.Boolean()),
  cacheable: Type.Optional(Type.Boolean()),
  input: Type.Object({ schema: JsonObject }),
  output: Type.Object({ schema: JsonObject }),
  attributes: Type.Optional(TagMap),
});

const Configuration = Type.Object({ data: Type.Optional(JsonObject), schema: Type.Optional(JsonObject) });

const Subscriptions = Type.Object({
  events: Type.Union([Type.Record(Type.String(), Type.Object({})), Type.Null()]),
});

const TagDefinitionsHolder = Type.Object({ tags: Type.Optional(TagDefinitions) });

export const BotIntegrationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  enabled: Type.Boolean(),
  webhookId: Type.String(),
  webhookUrl: Type.String(),
  webchatClientId: Type.Optional(
    Type.String({ description: 'The chat channel’s id for the official webchat (`clientId`)' }),
  ),
  webchatShareUrl: Type.Optional(
    Type.String({ description: 'A full-page chat with the bot, to share as a link' }),
  ),
  identifier: Type.Optional(Type.String()),
  configurationType: Nullable(Type.String()),
  configuration: JsonObject,
  status: Type.String(),
  statusReason: Nullable(Type.String()),
  disabledChannels: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  title: Type.String(),
  description: Type.String(),
  iconUrl: Type.String(),
  public: Type.Boolean(),
  visibility: Type.String(),
  verificationStatus: Type.String(),
  lifecycleStatus: Type.String(),
});

export const BotSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  name: Type.String(),
  description: Type.Optional(Type.String()),
  deployedAt: Type.Optional(Timestamp),
  runtime: Type.Optional(
    Type.Enum(BOT_RUNTIMES, {
      description:
        'What runs its code: `parley` (a package of `parley deploy`) or `botpress-sdk` (a bundle of `bp deploy`); absent without code',
    }),
  ),
  dev: Type.Boolean(),
  type: BotType,
  status: Type.Union([Type.Literal('active'), Type.Literal('deploying'), Type.Literal('deleting')]),
  tags: TagMap,
  signingSecret: Type.String({ description: 'Empty for a role that may not change the bot' }),
  integrations: Type.Record(Type.String(), BotIntegrationSchema),
  plugins: Type.Record(Type.String(), JsonObject),
  maxExecutionTime: Type.Optional(Type.Number()),
  user: Type.Object({ tags: TagDefinitions }),
  conversation: Type.Object({ tags: TagDefinitions }),
  message: Type.Object({ tags: TagDefinitions }),
  states: Type.Record(Type.String(), StateDefinition),
  configuration: Type.Object({ data: JsonObject, schema: JsonObject }),
  events: Type.Record(Type.String(), EventDefinition),
  recurringEvents: Type.Record(
    Type.String(),
    Type.Object({
      schedule: Type.Object({ cron: Type.String() }),
      type: Type.String(),
      payload: JsonObject,
      failedAttempts: Type.Integer(),
      lastFailureReason: Nullable(Type.String()),
    }),
  ),
  subscriptions: Subscriptions,
  actions: Type.Record(Type.String(), ActionDefinition),
  secrets: Type.Array(Type.String(), { description: 'Names only: values never leave the server' }),
  createdBy: Type.Optional(Type.String()),
  alwaysAlive: Type.Boolean(),
  medias: Type.Array(Media),
  versionId: Type.Optional(
    Type.String({
      description: 'Parley: the version of its code it runs (`listBotVersions`); absent without code',
    }),
  ),
});
export type Bot = Static<typeof BotSchema>;

/** A version of a bot's code, as `listBotVersions` and `createBotVersion` answer it. */
export const BotVersionSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  number: Type.Integer({
    minimum: 1,
    description: 'Parley: 1, 2, 3... in the order the bot’s versions were made',
  }),
  createdAt: Timestamp,
  createdBy: Type.Optional(Type.String({ description: 'Parley: the account that deployed or made it' })),
  runtime: Nullable(
    Type.Enum(BOT_RUNTIMES, {
      description:
        'Parley: `parley` (a package, from `parley deploy` or the console) or `botpress-sdk` (a bundle, from `bp deploy`)',
    }),
  ),
  deployed: Type.Boolean({ description: 'Parley: whether the bot runs this version now' }),
});
export type BotVersion = Static<typeof BotVersionSchema>;

/** How many files a draft may hold, and how long each may be (characters). */
export const DRAFT_LIMITS = { files: 500, fileLength: 1_000_000 } as const;

/** A path of the package folder: `/`-separated, relative, without `.` or `..` segments. */
const PackagePath = Type.String({
  pattern: '^(?!.*(^|/)\\.{1,2}(/|$))[^/\\\\][^\\\\]*$',
  maxLength: 500,
  description: 'A path of the package folder, e.g. workflows/main.json',
});

/** The files of a bot package folder, as a draft keeps them: path → text. */
export const DraftFilesSchema = Type.Record(
  PackagePath,
  Type.String({ maxLength: DRAFT_LIMITS.fileLength }),
  // Names outside the pattern (a path out of the folder) are refused, not ignored.
  { maxProperties: DRAFT_LIMITS.files, additionalProperties: false },
);
export type DraftFiles = Static<typeof DraftFilesSchema>;

/** Where the author left each node on the canvas: workflow → node id → its box's top left corner. */
export const DraftLayoutSchema = Type.Record(
  Type.String(),
  Type.Record(Type.String(), Type.Object({ x: Type.Number(), y: Type.Number() })),
);
export type DraftLayout = Static<typeof DraftLayoutSchema>;

/** One problem of a package, as `parley validate` prints it. */
export const PackageProblemSchema = Type.Object({
  file: Type.String({ description: 'The file, relative to the package folder' }),
  line: Type.Integer({ minimum: 1 }),
  column: Type.Integer({ minimum: 1 }),
  field: Type.String({
    description:
      'The field, as a JSON pointer into the file (e.g. /nodes/2/cards/0/to); empty for a whole file',
  }),
  message: Type.String(),
});
export type PackageProblem = Static<typeof PackageProblemSchema>;

/** A bot's draft: the package source the console edits, one per bot. */
export const BotDraftSchema = Type.Object({
  files: DraftFilesSchema,
  layout: DraftLayoutSchema,
  saved: Type.Boolean({
    description: 'false: no draft is saved, and these are the files of the package the bot runs',
  }),
  codeFrom: Type.Enum(['sources', 'compiled'], {
    description:
      '`compiled`: the package was deployed by `parley deploy`, which uploads compiled code, so its code files (actions, hooks, code/) hold the JavaScript compiled from its sources',
  }),
  baseVersionId: Type.Optional(
    Type.String({ description: 'The version the draft started from, or the one its last deploy made' }),
  ),
  updatedAt: Type.Optional(Timestamp),
  updatedBy: Type.Optional(Type.String()),
});
export type BotDraft = Static<typeof BotDraftSchema>;

const VersionDescriptionField = Type.String({
  maxLength: 2000,
  description: 'Parley: a note kept with the version this deploy of `code` makes (`listBotVersions`)',
});

export const BotSummarySchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  name: Type.String(),
  deployedAt: Type.Optional(Timestamp),
  tags: TagMap,
  type: BotType,
  status: Type.Enum(BOT_STATUSES, { description: 'Parley: the bot’s status, as `getBot` gives it' }),
});
export type BotSummary = Static<typeof BotSummarySchema>;

const BotNameField = Type.String({ minLength: 1, maxLength: 200 });

export const CreateBotBodySchema = Type.Object({
  name: Type.Optional(BotNameField),
  description: Type.Optional(Type.String()),
  tags: Type.Optional(TagMap),
  dev: Type.Optional(Type.Boolean()),
  type: Type.Optional(BotType),
  code: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  maxExecutionTime: Type.Optional(Type.Number({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
  configuration: Type.Optional(Configuration),
  user: Type.Optional(TagDefinitionsHolder),
  conversation: Type.Optional(TagDefinitionsHolder),
  message: Type.Optional(TagDefinitionsHolder),
  states: Type.Optional(Type.Record(Type.String(), StateDefinition)),
  events: Type.Optional(Type.Record(Type.String(), EventDefinition)),
  recurringEvents: Type.Optional(Type.Record(Type.String(), RecurringEventDefinition)),
  subscriptions: Type.Optional(Subscriptions),
  actions: Type.Optional(Type.Record(Type.String(), ActionDefinition)),
  medias: Type.Optional(Type.Array(Media)),
  secrets: Type.Optional(TagMap),
  versionDescription: Type.Optional(VersionDescriptionField),
});
export type CreateBotBody = Static<typeof CreateBotBodySchema>;

const TagDefinitionChanges = Type.Object({
  tags: Type.Optional(
    NullableMap(
      Type.Object({ title: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }),
    ),
  ),
});

export const UpdateBotBodySchema = Type.Object({
  name: Type.Optional(BotNameField),
  description: Type.Optional(Type.String()),
  tags: Type.Optional(TagChangeMap),
  code: Type.Optional(Type.String()),
  url: Type.Optional(Nullable(Type.String())),
  type: Type.Optional(BotType),
  maxExecutionTime: Type.Optional(Type.Number({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
  alwaysAlive: Type.Optional(Type.Boolean()),
  blocked: Type.Optional(Type.Boolean()),
  authentication: Type.Optional(Type.Union([Type.Literal('iam'), Type.Literal('hmac-sha256')])),
  configuration: Type.Optional(Configuration),
  user: Type.Optional(TagDefinitionChanges),
  conversation: Type.Optional(TagDefinitionChanges),
  message: Type.Optional(TagDefinitionChanges),
  states: Type.Optional(NullableMap(StateDefinition)),
  events: Type.Optional(NullableMap(EventDefinition)),
  recurringEvents: Type.Optional(NullableMap(RecurringEventDefinition)),
  actions: Type.Optional(NullableMap(ActionDefinition)),
  subscriptions: Type.Optional(
    Type.Object({ events: Type.Union([NullableMap(Type.Object({})), Type.Null()]) }),
  ),
  integrations: Type.Optional(NullableMap(JsonObject)),
  plugins: Type.Optional(NullableMap(JsonObject)),
  medias: Type.Optional(Type.Array(Media)),
  secrets: Type.Optional(TagChangeMap),
  layers: Type.Optional(Type.Array(Type.String())),
  versionDescription: Type.Optional(VersionDescriptionField),
});
export type UpdateBotBody = Static<typeof UpdateBotBodySchema>;

/** Lines per getBotLogs page (the operation has no pageSize). */
export const LOG_PAGE_SIZE = 100;

/** Parley: a line that tells of a model or tool call of the turn, as data (the line's text tells it to people). */
export const BotLogCallSchema = Type.Object({
  kind: Type.Enum(BOT_LOG_CALL_KINDS),
  durationMs: Type.Integer({ minimum: 0, description: 'How long the call took' }),
});
export type BotLogCall = Static<typeof BotLogCallSchema>;

/** One line of `GetBotLogsResponse.logs`; the field names are the client's (`eventId` and `call` are Parley's). */
export const BotLogSchema = Type.Object({
  timestamp: Type.String({ description: 'ISO 8601, UTC' }),
  level: Type.String({ description: 'debug, info, warn or error' }),
  message: Type.String(),
  workflowId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  conversationId: Type.Optional(Type.String()),
  eventId: Type.Optional(
    Type.String({ description: 'Parley: the event whose turn logged the line (none for lines of no turn)' }),
  ),
  call: Type.Optional(BotLogCallSchema),
});
export type BotLog = Static<typeof BotLogSchema>;

/** How many turns of a test conversation `listBotDraftTestTurns` answers: the latest. */
export const DRAFT_TEST_TURNS_MAX = 100;

/** One thing a turn of the draft did: a card it ran, or the transition it took out of a node. */
export const DraftTestStepSchema = Type.Object({
  workflow: Type.String(),
  node: Type.String(),
  card: Type.Optional(Type.Integer({ minimum: 0, description: 'The card’s place in the node' })),
  cardType: Type.Optional(Type.String({ description: 'The card’s type (say, capture, aiGenerate...)' })),
  next: Type.Optional(
    Type.String({
      description:
        'The node the dialog went to from this one; `end` or `exit` for those nodes, none: nowhere',
    }),
  ),
});
export type DraftTestStep = Static<typeof DraftTestStepSchema>;

/** The variables of a dialog after a turn, as its cards and code read them. */
export const DraftTestVariablesSchema = Type.Object({
  conversation: JsonObject,
  user: JsonObject,
  workflow: JsonObject,
  /** The workflow whose variables `workflow` holds (none when no workflow ran). */
  workflowName: Type.Optional(Type.String()),
});
export type DraftTestVariables = Static<typeof DraftTestVariablesSchema>;

/** One turn of a conversation with a bot's draft: what ran, the variables after it, its log lines. */
export const DraftTestTurnSchema = Type.Object({
  eventId: Type.String(),
  messageId: Type.Optional(Type.String({ description: 'The message the turn answered' })),
  replyIds: Type.Array(Type.String(), { description: 'The messages the turn sent' }),
  createdAt: Timestamp,
  steps: Type.Array(DraftTestStepSchema),
  variables: DraftTestVariablesSchema,
  error: Type.Optional(
    Type.String({
      description: 'Why the turn failed (the last try, when it is tried again); none: it ended',
    }),
  ),
  logs: Type.Array(BotLogSchema, {
    description: 'Its log lines; those with `call` tell of its model and tool calls',
  }),
});
export type DraftTestTurn = Static<typeof DraftTestTurnSchema>;

/** The lengths of a record's period `getBotAnalytics` offers (`interval`); the hosted product's are days. */
export const ANALYTICS_INTERVAL_NAMES = ['hour', 'day'] as const;
export type AnalyticsInterval = (typeof ANALYTICS_INTERVAL_NAMES)[number];

/** At most this many records (periods) in one answer: a year of days, or 16 days of hours. */
export const ANALYTICS_RECORDS_MAX = 400;

const Count = Type.Integer({ minimum: 0 });

const Spread = Type.Object({
  mean: Type.Number(),
  sd: Type.Number(),
  min: Type.Number(),
  max: Type.Number(),
});

/**
 * One period of `GetBotAnalyticsResponse.records`; the field names are the client's. `turns` is Parley's
 * own: what the engine records of the turns it ran (an event from queued to done).
 */
export const BotAnalyticsRecordSchema = Type.Object({
  startDateTimeUtc: Type.String({ description: 'Beginning of the period (inclusive)' }),
  endDateTimeUtc: Type.String({ description: 'End of the period (inclusive)' }),
  returningUsers: Type.Integer({ description: 'Users created before the period who wrote in it' }),
  newUsers: Type.Integer({ description: 'Users created in the period' }),
  sessions: Type.Integer({ description: 'Conversations with at least one message in the period' }),
  messages: Type.Integer({ description: 'Deprecated: the same as userMessages' }),
  userMessages: Count,
  botMessages: Count,
  events: Count,
  eventTypes: Type.Record(Type.String(), Count),
  customEvents: Type.Record(Type.String(), Type.Number({ description: 'trackAnalytics counts, summed' })),
  llm: Type.Object({
    calls: Count,
    errors: Count,
    inputTokens: Count,
    outputTokens: Count,
    latency: Spread,
    tokensPerSecond: Spread,
    cost: Type.Object({ ...Spread.properties, sum: Type.Number() }),
  }),
  turns: Type.Object({
    count: Type.Integer({ description: 'Events the bot finished handling (processed or failed)' }),
    failed: Type.Integer({ description: 'Of those, the ones that failed' }),
    durationMs: Type.Object({
      p50: Type.Union([Type.Number(), Type.Null()], { description: 'Median time from queued to done' }),
      p99: Type.Union([Type.Number(), Type.Null()]),
    }),
  }),
});
export type BotAnalyticsRecord = Static<typeof BotAnalyticsRecordSchema>;
