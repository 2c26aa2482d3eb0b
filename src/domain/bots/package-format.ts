import { Type } from 'typebox';
import type { Json as JsonValue, JsonObject } from '../shared/json.ts';
import type { Static, TSchema } from 'typebox';
import { MAX_COLUMN_NAME, MAX_FACTOR } from '../tables/limits.ts';
import { MAX_HANDOFF_TIMEOUT_SECONDS } from '../handoffs/schemas.ts';

/** The longest time limit of a call into bot code: what a package's `limits.timeoutMs` may say. */
export const MAX_CALL_TIMEOUT_MS = 60_000;

// The bot package's format, declared once: what `parley validate` and `parley deploy` check (package/),
// and the wire shape of the definition the Admin API answers (getBotPackage), so it is pure, below the
// contract, like the domain's other schemas; the package's loader, checks and compiler stay in package/.

/**
 * The Parley bot package, format version 1: a folder a developer keeps in Git.
 *
 *   bot.json                      the manifest (BotManifestSchema)
 *   actions/<name>.json           an action's description and schemas (ActionDefinitionSchema)
 *   actions/<name>.ts | .js       its code: a function body with `input` in scope that returns the output
 *   hooks/<hook>/<file>.ts | .js  hook code, run in file-name order (HOOK_TYPES)
 *   workflows/<name>.json         a workflow: nodes, cards, transitions, triggers (WorkflowSchema); `main` is required
 *   code/<file>.ts | .js          code referenced by execute-code cards (`"file": "code/<file>.ts"`)
 *   knowledge/<name>.json         a knowledge base and the documents of the package it holds (KnowledgeBaseDefinitionSchema)
 *   tables/<name>.json            a table of the Tables API: its name, columns and key (TableDefinitionSchema)
 *
 * Code is TypeScript or JavaScript, compiled at deploy time; it cannot import modules. Every code unit is
 * the body of an async function with these in scope: event, workflow, conversation, user, bot, env,
 * turn, client, actions, console (and `input` in actions, `message` in the outgoing-message hooks).
 * Card fields that hold text may embed expressions as `{{ expression }}`; a string field that is
 * exactly one `{{ expression }}` takes the expression's value (any JSON), not its text.
 *
 * The JSON Schemas generated from these definitions are published in `schemas/` for editors.
 */
export const FORMAT_VERSION = 1;

/**
 * The `contentMediaType` of a field holding bot code (TypeScript or JavaScript): editors that read the
 * schema, the console's card form among them, edit it as code.
 */
export const CODE_MEDIA_TYPE = 'text/typescript';

export const HOOK_TYPES = [
  'before_incoming_message',
  'after_incoming_message',
  'before_outgoing_message',
  'after_outgoing_message',
  'before_incoming_event',
  'after_incoming_event',
  'after_turn_end',
  'after_conversation_end',
] as const;
export type HookType = (typeof HOOK_TYPES)[number];

export const VARIABLE_SCOPES = ['workflow', 'conversation', 'user', 'bot'] as const;
export type VariableScope = (typeof VARIABLE_SCOPES)[number];

const Name = Type.String({
  pattern: '^[a-zA-Z][a-zA-Z0-9_-]{0,63}$',
  description: 'Letters, digits, _ and -',
});
const JsonSchemaObject = Type.Unsafe<JsonObject>(
  Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON Schema' }),
);
/** Any JSON value: what a package file holds was parsed from JSON. */
const Json = Type.Unsafe<JsonValue>(Type.Unknown());

export const VariableSchema = Type.Object(
  {
    type: Type.Enum(['string', 'number', 'boolean', 'object', 'array']),
    default: Type.Optional(Json),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const BotManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    formatVersion: Type.Literal(FORMAT_VERSION),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String()),
    configuration: Type.Optional(
      Type.Object(
        {
          variables: Type.Optional(
            Type.Record(Name, VariableSchema, { description: 'Readable as env.<name>' }),
          ),
          secrets: Type.Optional(
            Type.Array(Name, { description: 'Names of secrets, set with updateBot; readable as env.<name>' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    variables: Type.Optional(
      Type.Object(
        {
          conversation: Type.Optional(Type.Record(Name, VariableSchema)),
          user: Type.Optional(Type.Record(Name, VariableSchema)),
          bot: Type.Optional(Type.Record(Name, VariableSchema)),
          workflow: Type.Optional(
            Type.Record(Name, VariableSchema, {
              description: 'Defaults of every workflow; a workflow may add its own',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    channel: Type.Optional(
      Type.Object(
        {
          chat: Type.Optional(
            Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    schedules: Type.Optional(
      Type.Record(
        Name,
        Type.Object(
          {
            cron: Type.String({
              description: 'Five fields: minute hour day-of-month month day-of-week (UTC)',
            }),
            payload: Type.Optional(Type.Record(Type.String(), Json)),
          },
          { additionalProperties: false },
        ),
        { description: 'Each fires a custom event of that name on its schedule' },
      ),
    ),
    events: Type.Optional(
      Type.Record(
        Name,
        Type.Object(
          { description: Type.Optional(Type.String()), schema: Type.Optional(JsonSchemaObject) },
          { additionalProperties: false },
        ),
        { description: 'Custom event types the bot accepts' },
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          memoryMb: Type.Optional(Type.Integer({ minimum: 8, maximum: 1024 })),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 10, maximum: MAX_CALL_TIMEOUT_MS })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type BotManifest = Static<typeof BotManifestSchema>;

export const ActionDefinitionSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    input: JsonSchemaObject,
    output: JsonSchemaObject,
    cacheable: Type.Optional(
      Type.Object(
        { ttlSeconds: Type.Integer({ minimum: 1, maximum: 30 * 24 * 3600 }) },
        {
          additionalProperties: false,
          description: 'The same input within the TTL returns the stored output',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ActionDefinition = Static<typeof ActionDefinitionSchema>;

/** A string that may embed `{{ expression }}`s, or any other JSON (templated recursively). */
const Template = Json;
/** A JavaScript expression, e.g. `workflow.age >= 18`. */
const Expression = Type.String({ minLength: 1 });
/** `<scope>.<name>`, e.g. `workflow.age`. */
const VARIABLE_REF = '^(workflow|conversation|user|bot)\\.[a-zA-Z_][a-zA-Z0-9_]*$';
const VariableRef = Type.String({ pattern: VARIABLE_REF });
const NodeRef = Type.String({ minLength: 1 });
const TableRef = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'A table of the package (tables/<name>.json, by file name or table name), or any table’s name or id',
});
const KnowledgeBaseRef = Type.String({
  minLength: 1,
  description: 'A knowledge base of the package (knowledge/<name>.json), or the id of one (kb_…)',
});
/** The most knowledge bases one knowledgeAnswer card searches. */
const MAX_ANSWER_KNOWLEDGE_BASES = 10;
/** What an AI card tells the model (its system prompt); templates allowed. */
const AiInstructions = Type.String({ minLength: 1, maxLength: 20_000 });
/** The model of an AI card and its sampling. */
const AiModelFields = {
  model: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: '`best` (the default), `fast`, or `<provider>:<model>`',
    }),
  ),
  maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_768 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
};
/** The caps of an autonomous card, per turn: the model calls it makes, and the tokens they use. */
export const AUTONOMOUS_LIMITS = {
  maxIterations: { default: 10, maximum: 50 },
  maxTokens: { default: 50_000, maximum: 1_000_000 },
  tools: { maximum: 64 },
} as const;
/** The names a model calls tools by (what OpenAI-compatible providers accept). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** What the model is told of a tool that leaves the loop (a node's or a workflow's): required. */
const LeaveDescription = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'When the model should go there',
});

const toolFields = (description: string) => ({
  name: Type.Optional(
    Type.String({ pattern: TOOL_NAME.source, description: `The name the model calls it by; ${description}` }),
  ),
  description: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2000, description: 'What the model is told the tool does' }),
  ),
});
/** A tool of an autonomous card: what the model may do, besides answering. */
export const AutonomousToolSchema = Type.Union([
  Type.Object(
    {
      type: Type.Literal('action'),
      action: Type.String({
        pattern: '^[a-zA-Z][a-zA-Z0-9_-]{0,63}$',
        description: 'An action of the package',
      }),
      ...toolFields('default: the action’s name; its input schema is the tool’s parameters'),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('node'),
      node: NodeRef,
      name: toolFields('default: goto_<node>').name,
      description: LeaveDescription,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('workflow'),
      workflow: Name,
      name: toolFields('default: start_<workflow>').name,
      description: LeaveDescription,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('knowledge'),
      knowledgeBase: Type.String({
        minLength: 1,
        description: 'A knowledge base of the package (knowledge/<name>.json), or the id of one (kb_…)',
      }),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 20, description: 'Passages answered (default 3)' }),
      ),
      ...toolFields('default: search_<knowledgeBase>'),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('sendMessage'), ...toolFields('default: send_message') },
    {
      additionalProperties: false,
    },
  ),
  Type.Object(
    { type: Type.Literal('waitForUser'), ...toolFields('default: wait_for_user') },
    {
      additionalProperties: false,
    },
  ),
]);
export type AutonomousTool = Static<typeof AutonomousToolSchema>;

/** Where a table card stores its result. */
const TableResult = (what: string) =>
  Type.Optional(Type.String({ pattern: VARIABLE_REF, description: what }));

const card = <K extends string, T extends Record<string, TSchema>>(
  type: K,
  properties: T,
  description: string,
) =>
  Type.Object(
    { type: Type.Literal(type), id: Type.Optional(Type.String()), ...properties },
    { additionalProperties: false, description },
  );

export const CardSchema = Type.Union([
  card(
    'say',
    { message: Template },
    'Sends a message: any chat payload ({ type: "text", text } and the others)',
  ),
  card(
    'code',
    {
      code: Type.Optional(Type.String({ contentMediaType: CODE_MEDIA_TYPE })),
      file: Type.Optional(Type.String()),
    },
    'Runs code (inline `code`, or a `file` under code/)',
  ),
  card(
    'expression',
    { condition: Expression, to: NodeRef },
    'Transitions to `to` when the condition is true',
  ),
  card(
    'capture',
    {
      variable: VariableRef,
      kind: Type.Enum(['text', 'number', 'choice', 'email']),
      prompt: Type.Optional(Template),
      choices: Type.Optional(Type.Array(Type.Object({ label: Type.String(), value: Type.String() }))),
      validation: Type.Optional(Expression),
      retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
      retryMessage: Type.Optional(Template),
      onFailure: Type.Optional(NodeRef),
    },
    'Waits for the user’s next message and stores it, validated, in `variable`',
  ),
  card('set', { variable: VariableRef, value: Template }, 'Sets a variable to a value (templates allowed)'),
  card(
    'action',
    {
      action: Type.String({ minLength: 1 }),
      input: Type.Optional(Template),
      output: Type.Optional(VariableRef),
    },
    'Calls an action (`name`, or `alias:name` of an integration) and stores its output',
  ),
  card(
    'goto',
    { workflow: Name, node: Type.Optional(NodeRef) },
    'Runs another workflow from its entry node; at an exit node it returns here',
  ),
  card('end', {}, 'Ends the conversation'),
  card(
    'knowledge',
    {
      knowledgeBase: KnowledgeBaseRef,
      question: Type.Optional(Template),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 20, description: 'Passages kept (default 3)' }),
      ),
      variable: Type.Optional(VariableRef),
      answer: Type.Optional(
        Type.Boolean({ description: 'Reply with the best passage and its source (default false)' }),
      ),
      notFound: Type.Optional(Template),
      onNotFound: Type.Optional(NodeRef),
    },
    'Searches a knowledge base for `question` (default: the user’s last message): the best passages go to `variable` and to event.kb; with `answer`, the best one is the reply (`notFound` when there is none); `onNotFound` is the node to go to when nothing is found',
  ),
  card(
    'tableFind',
    {
      table: TableRef,
      filter: Type.Optional(Template),
      orderBy: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      orderDirection: Type.Optional(Type.Enum(['asc', 'desc'])),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 1000, description: 'Rows kept at most (default 20)' }),
      ),
      variable: TableResult('The rows found (a list, maybe empty)'),
      onNotFound: Type.Optional(NodeRef),
    },
    'Finds rows of a table (findTableRows) matching `filter` into `variable`; `onNotFound` is the node to go to when none matches',
  ),
  card(
    'tableInsert',
    { table: TableRef, row: Template, variable: TableResult('The row created (with its id)') },
    'Inserts a row into a table (createTableRows)',
  ),
  card(
    'tableUpdate',
    {
      table: TableRef,
      rowId: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1 })], {
        description: 'The row’s id: a number, or a template giving one (`id` is the card’s own id)',
      }),
      values: Template,
      variable: TableResult('The row as updated'),
    },
    'Changes the given columns of the row `rowId` (updateTableRows)',
  ),
  card(
    'tableUpsert',
    {
      table: TableRef,
      row: Template,
      keyColumn: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: MAX_COLUMN_NAME,
          description:
            'The column that finds the row to update (default: the package table’s keyColumn, else id)',
        }),
      ),
      variable: TableResult('The row inserted or updated'),
    },
    'Updates the row whose `keyColumn` value is the row’s, or inserts it (upsertTableRows)',
  ),
  card(
    'tableDelete',
    { table: TableRef, filter: Template, variable: TableResult('How many rows were deleted') },
    'Deletes the rows of a table matching `filter` (deleteTableRows)',
  ),
  card(
    'aiGenerate',
    {
      instructions: AiInstructions,
      context: Type.Optional(Template),
      ...AiModelFields,
      variable: Type.Optional(VariableRef),
      say: Type.Optional(
        Type.Boolean({ description: 'Send the text to the user (default: when there is no variable)' }),
      ),
    },
    'Generates text with a language model from `instructions` and `context` (default: the user’s last message): into `variable`, and to the user with `say`',
  ),
  card(
    'aiTask',
    {
      instructions: AiInstructions,
      input: Type.Optional(Template),
      schema: Type.Object(
        {},
        { additionalProperties: true, description: 'A JSON Schema of the object to extract' },
      ),
      ...AiModelFields,
      variable: VariableRef,
      onFailure: Type.Optional(NodeRef),
      reason: Type.Optional(
        Type.String({ pattern: VARIABLE_REF, description: 'Where the reason of a failure goes' }),
      ),
    },
    'Extracts an object that matches `schema` from `input` (default: the user’s last message) with a language model into `variable`; an answer that does not match is asked again once with the error, then `onFailure` is taken (or the turn fails)',
  ),
  card(
    'aiTransition',
    {
      instructions: Type.Optional(AiInstructions),
      input: Type.Optional(Template),
      transitions: Type.Array(
        Type.Object(
          {
            label: Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9_-]{0,63}$' }),
            description: Type.String({ minLength: 1, maxLength: 1000 }),
            to: NodeRef,
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 20 },
      ),
      onNone: Type.Optional(NodeRef),
      ...AiModelFields,
      variable: Type.Optional(VariableRef),
    },
    'Goes to the node of the transition whose label a language model chooses for `input` (default: the user’s last message), the descriptions its only vocabulary; when none applies, to `onNone` (or the next card); the label (or null) goes into `variable`',
  ),
  card(
    'knowledgeAnswer',
    {
      knowledgeBase: Type.Union([
        KnowledgeBaseRef,
        Type.Array(KnowledgeBaseRef, { minItems: 1, maxItems: MAX_ANSWER_KNOWLEDGE_BASES }),
      ]),
      question: Type.Optional(Template),
      instructions: Type.Optional(AiInstructions),
      ...AiModelFields,
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 20, description: 'Passages searched for (default 5)' }),
      ),
      minScore: Type.Optional(
        Type.Number({
          minimum: 0,
          description:
            'Passages scoring under it do not count as support, on the search’s scale (searchFiles’ `score`; default 0: every passage found)',
        }),
      ),
      variable: Type.Optional(VariableRef),
      noAnswer: Type.Optional(Template),
      onNoAnswer: Type.Optional(NodeRef),
    },
    'Answers `question` (default: the user’s last message) with a language model from the passages a search of the knowledge bases finds, citing them (their title and link); the answer goes to the user, or into `variable`. Without a passage scoring `minScore` or more, or when the model finds no answer in them, says `noAnswer` (by default, when there is no `onNoAnswer`, that it does not know) and goes to `onNoAnswer` (or the next card)',
  ),
  card(
    'autonomous',
    {
      instructions: AiInstructions,
      model: AiModelFields.model,
      temperature: AiModelFields.temperature,
      tools: Type.Array(AutonomousToolSchema, { maxItems: AUTONOMOUS_LIMITS.tools.maximum }),
      maxIterations: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: AUTONOMOUS_LIMITS.maxIterations.maximum,
          description: `Model calls per turn at most (default ${AUTONOMOUS_LIMITS.maxIterations.default})`,
        }),
      ),
      maxTokens: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: AUTONOMOUS_LIMITS.maxTokens.maximum,
          description: `Tokens per turn at most, input and output of every model call (default ${AUTONOMOUS_LIMITS.maxTokens.default}); no call is made past them`,
        }),
      ),
      onLimit: Type.Optional(NodeRef),
      limitMessage: Type.Optional(Template),
    },
    'A language model told `instructions` holds the node: it answers the user, calls its `tools` (actions, knowledge search, messages, waiting for the user, going to a node or a workflow) and goes on from the user’s next message, until a tool takes it elsewhere; past `maxIterations` or `maxTokens` in a turn it goes to `onLimit`, or sends `limitMessage` and waits for the user. It is the last card of its node',
  ),
  card(
    'handoff',
    {
      reason: Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Why the bot hands over: what the agents read in the queue (templates allowed)',
      }),
      team: Type.Optional(
        Type.String({ minLength: 1, maxLength: 200, description: 'The team or tag it is routed to' }),
      ),
      message: Type.Optional(Template),
      timeout: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: MAX_HANDOFF_TIMEOUT_SECONDS,
          description: 'Seconds an agent has to take it (default: no limit); then it times out',
        }),
      ),
      onResolved: Type.Optional(NodeRef),
      onTimeout: Type.Optional(NodeRef),
    },
    'Hands the conversation to a person: tells the user `message` (text or a message), opens a handoff with `reason` for the agents of `team`, and waits; meanwhile the user’s messages go to the agent, not to the workflows (the hooks still see them). When an agent resolves it the dialog goes to `onResolved`, when no agent took it within `timeout` seconds to `onTimeout` (either way, by default, the next card)',
  ),
]);
export type Card = Static<typeof CardSchema>;

const Transition = Type.Union([
  NodeRef,
  Type.Array(Type.Object({ when: Type.Optional(Expression), to: NodeRef }, { additionalProperties: false })),
]);

export const TriggerSchema = Type.Union([
  Type.Object({ kind: Type.Literal('conversation_started') }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('message_received') }, { additionalProperties: false }),
  Type.Object(
    { kind: Type.Literal('custom_event'), event: Type.String({ minLength: 1 }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { kind: Type.Literal('schedule'), cron: Type.String({ minLength: 1 }) },
    { additionalProperties: false },
  ),
]);
export type Trigger = Static<typeof TriggerSchema>;

export const NODE_TYPES = ['start', 'entry', 'exit', 'end', 'standard', 'trigger'] as const;

export const NodeSchema = Type.Object(
  {
    id: NodeRef,
    type: Type.Enum(NODE_TYPES),
    cards: Type.Optional(Type.Array(CardSchema)),
    next: Type.Optional(Transition),
    trigger: Type.Optional(TriggerSchema),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type WorkflowNode = Static<typeof NodeSchema>;

export const WorkflowSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    variables: Type.Optional(Type.Record(Name, VariableSchema)),
    nodes: Type.Array(NodeSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);
export type Workflow = Static<typeof WorkflowSchema>;

/** Documents a knowledge base holds load from the package folder; these formats are indexed. */
export const KNOWLEDGE_FILE_EXTENSIONS = ['.md', '.markdown', '.txt', '.html', '.htm', '.pdf'] as const;

export const KnowledgeBaseDefinitionSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    files: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: `Documents of the package folder, by path (e.g. "docs/faq.md"): ${KNOWLEDGE_FILE_EXTENSIONS.join(', ')}. parley deploy uploads the changed ones and indexes them.`,
    }),
  },
  { additionalProperties: false },
);
export type KnowledgeBaseDefinition = Static<typeof KnowledgeBaseDefinitionSchema>;

/** The Tables API's table names: a letter or `_`, then letters, digits and `_`, at most 50 (domain/tables/tables.ts). */
export const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,49}$/;

export const TableDefinitionSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    name: Type.Optional(
      Type.String({
        pattern: TABLE_NAME.source,
        description:
          'Letters, digits and _, starting with a letter or _, e.g. OrdersTable; default: the file’s name',
      }),
    ),
    schema: Type.Unsafe<JsonObject>(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'The columns: a JSON Schema ({ "type": "object", "properties": { "status": { "type": "string" } } }; a date is { "type": "string", "format": "date-time" }), or an example row ({ "status": "shipped", "total": 12.5 })',
      }),
    ),
    keyColumn: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_COLUMN_NAME,
        description:
          'A string, number, boolean or date column whose values are unique (upserts find rows by it)',
      }),
    ),
    tags: Type.Optional(Type.Record(Type.String(), Type.String())),
    factor: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_FACTOR,
        description: 'Row size limit: 4 KB × factor (default 1)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TableDefinition = Static<typeof TableDefinitionSchema>;

/**
 * A package as deployed, without its code: the manifest, the actions' descriptions and schemas, the
 * workflows (their cards as written, an inline `code` card's code with them), the knowledge bases and
 * the tables. What the console draws a bot's flows from (getBotPackage).
 */
export const PackageDefinitionSchema = Type.Object({
  manifest: BotManifestSchema,
  actions: Type.Record(Type.String(), ActionDefinitionSchema),
  workflows: Type.Record(Type.String(), WorkflowSchema),
  knowledge: Type.Optional(
    Type.Record(Type.String(), KnowledgeBaseDefinitionSchema, {
      description:
        'Knowledge bases by name (their documents are uploaded to the Files API, not carried here)',
    }),
  ),
  tables: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object(
        { ...TableDefinitionSchema.properties, name: Type.String() },
        { additionalProperties: false },
      ),
      { description: 'Tables by file name, each with its `name` (the file’s name when the file gives none)' },
    ),
  ),
});
export type PackageDefinition = Static<typeof PackageDefinitionSchema>;
