import type { Static } from 'typebox';
import type { Db, Executor, Store } from '../../store/index.ts';
import type { Caches } from '../shared/caches.ts';
import type { Flag, Row } from '../../store/schema.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { ApiError, forbidden, notFound } from '../shared/errors.ts';
import { CHAT_INTEGRATION } from '../chat/channels.ts';
import { BUILT_IN_CHAT } from '../integrations/built-ins.ts';
import { LLM_INTEGRATION, LLM_INTERFACE_VERSION } from '../llm/llm-integration.ts';
import type { LlmIntegration } from '../llm/llm-integration.ts';
import { NOT_CONFIGURED } from '../llm/providers.ts';
import { applyLlmAliases } from '../llm/llm-aliases.ts';
import type { LlmAlias } from '../llm/llm-aliases.ts';
import type { ChatChannel, ChatChannels } from '../chat/channels.ts';
import type { Links } from './links.ts';
import { newId } from '../shared/ids.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest, SortDirection } from '../shared/pagination.ts';
import { can, requireRole } from '../workspace/roles.ts';
import type { BotWebhooks } from '../webhooks/bot-webhooks.ts';
import { newSigningSecret } from '../webhooks/signatures.ts';
import type { JsonObject, TagDefinitions } from '../shared/schemas.ts';
import { applyTagChanges, insertTags, deleteTags, hasAllTags, loadTags, withTags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import { mergeMap } from '../shared/json.ts';
import { SDK_RUNTIME } from './bot-code.ts';
import type { SdkRuntimeSlot } from './bot-code.ts';
import { takesWorkflowUpdates } from '../runtime/workflow-updates.ts';
import { checkChatConfiguration, checkOrigins } from '../webchat/appearance.ts';
import type {
  InstallationChanges,
  Installations,
  IntegrationsKeyedBy,
} from '../integrations/installations.ts';
import { applyPluginChanges, pluginView } from './bot-plugins.ts';
import { recordVersion, requireVersion } from './bot-versions.ts';
import { notDraftTwin } from './draft-twins.ts';
import type { BotPlugin } from './bot-plugins.ts';
import type {
  BotIntegrationSchema,
  StateDefinition,
  EventDefinition,
  RecurringEventDefinition,
  ActionDefinition,
  Media,
} from './schemas.ts';
import type { Bot, BotSummary, CreateBotBody, UpdateBotBody } from './schemas.ts';
import type { BotRuntime } from '../../value-sets.ts';
import { withSchemaDefaults } from '../shared/schema-defaults.ts';

export interface ListBotsQuery extends PageRequest {
  dev?: boolean;
  tags?: Record<string, string>;
  sortField?: 'createdAt' | 'updatedAt';
  sortDirection?: SortDirection;
}

type MapOf<T> = Record<string, T>;

export interface RuntimeBot {
  botId: string;
  workspaceId: string;
  updatedAt: string;
  code: string | null;
  runtime: BotRuntime | null;
  deployedAt: string | null;
  configuration: JsonObject;
  secrets: MapOf<string>;
  maxExecutionTime: number | undefined;
  /** The definition's recurring events (what `bp deploy` sends): an event of `type` on each cron time. */
  recurringEvents: MapOf<Static<typeof RecurringEventDefinition>>;
  /** The definition's actions (an SDK bot's, which its handler runs for `action_triggered`). */
  actions: MapOf<Static<typeof ActionDefinition>>;
  /**
   * A dev bot's `url` (what `bp dev` sets): its developer's own process, called there instead of any
   * code. Undefined for other bots, whose `url` is only kept.
   */
  devUrl: string | undefined;
  /** A draft twin's bot (domain/bots/draft-tests.ts): its turns are recorded for the test panel. */
  draftOf: string | undefined;
}

/** What tells a runtime whether a bot is its own and whether it changed since it was read. */
export interface RuntimeStamp {
  runtime: string | null;
  updatedAt: string;
  /** A dev bot (`bp dev`'s), called at its `url` when it has one. */
  dev: boolean;
}

/** Everything of a bot that is kept as one JSON document. */
interface Definition {
  configuration: { data: JsonObject; schema: JsonObject };
  user: { tags: Static<typeof TagDefinitions> };
  conversation: { tags: Static<typeof TagDefinitions> };
  message: { tags: Static<typeof TagDefinitions> };
  states: MapOf<Static<typeof StateDefinition>>;
  events: MapOf<Static<typeof EventDefinition>>;
  recurringEvents: MapOf<Static<typeof RecurringEventDefinition>>;
  subscriptions: { events: MapOf<object> | null };
  actions: MapOf<Static<typeof ActionDefinition>>;
  integrations: MapOf<JsonObject>;
  /** The built-in llm integration under other aliases (absent in definitions written before them). */
  llmAliases?: MapOf<LlmAlias>;
  /** By alias: what `bp deploy` sends of the plugins bundled into the bot's code. */
  plugins: MapOf<BotPlugin>;
  medias: Static<typeof Media>[];
  alwaysAlive: boolean;
  maxExecutionTime?: number;
  url?: string;
  blocked?: boolean;
  authentication?: string;
  layers?: string[];
}

function emptyDefinition(): Definition {
  return {
    configuration: { data: {}, schema: {} },
    user: { tags: {} },
    conversation: { tags: {} },
    message: { tags: {} },
    states: {},
    events: {},
    recurringEvents: {},
    subscriptions: { events: null },
    actions: {},
    integrations: {},
    plugins: {},
    medias: [],
    alwaysAlive: false,
  };
}

/**
 * The entry of the built-in LLM integration (the `llm` interface over the server's model provider or the
 * workspace's), under `llm` or another alias: `registered` when a provider is configured, which is what
 * the hosted client looks for. Its `name` is the alias: `@botpress/cognitive` calls
 * `<name>:listLanguageModels` and names the models `<name>:<model>`, as a preferences file written for
 * the hosted integration does.
 */
function llmIntegration(
  alias: string,
  configured: boolean,
  since: { enabled: boolean; createdAt: string; updatedAt: string },
): Static<typeof BotIntegrationSchema> {
  return {
    id: LLM_INTEGRATION,
    name: alias,
    version: LLM_INTERFACE_VERSION,
    enabled: configured && since.enabled,
    webhookId: '',
    webhookUrl: '',
    configurationType: null,
    configuration: {},
    status: configured ? 'registered' : 'registration_failed',
    statusReason: configured ? null : NOT_CONFIGURED,
    disabledChannels: [],
    createdAt: since.createdAt,
    updatedAt: since.updatedAt,
    title: 'LLM',
    description:
      'Parley’s built-in LLM integration: the `llm` interface’s generateContent and listLanguageModels, answered by the server’s model provider or the workspace’s.',
    iconUrl: '',
    public: true,
    visibility: 'public',
    verificationStatus: 'approved',
    lifecycleStatus: 'public',
  };
}

const SORT_COLUMNS = { createdAt: 'bots.created_at', updatedAt: 'bots.updated_at' } as const;

/**
 * The entry of the built-in chat channel in a bot's `integrations`.
 * `secrets`: whether to show the channel's signing key; it signs any end user's key, so only roles
 * that may change the bot see it.
 */
function chatIntegration(
  channel: ChatChannel,
  links: Links,
  secrets: boolean,
): Static<typeof BotIntegrationSchema> {
  return {
    id: CHAT_INTEGRATION,
    name: CHAT_INTEGRATION,
    version: BUILT_IN_CHAT.version,
    enabled: channel.enabled,
    webhookId: channel.webhookId,
    webhookUrl: links.chatUrl(channel.webhookId),
    // The webchat speaks to the same channel: its client id is the webhook id.
    webchatClientId: channel.webhookId,
    webchatShareUrl: links.webchatShareUrl(channel.webhookId),
    configurationType: null,
    configuration: {
      ...(secrets && channel.encryptionKey && { encryptionKey: channel.encryptionKey }),
      ...(channel.allowedOrigins && { allowedOrigins: channel.allowedOrigins }),
      ...(Object.keys(channel.webchat).length > 0 && { webchat: channel.webchat }),
      ...(channel.fallbackMessage && { fallbackMessage: channel.fallbackMessage }),
    },
    status: 'registered',
    statusReason: null,
    disabledChannels: [],
    createdAt: channel.createdAt,
    updatedAt: channel.updatedAt,
    title: BUILT_IN_CHAT.title,
    description: BUILT_IN_CHAT.description,
    iconUrl: '',
    public: true,
    visibility: 'public',
    verificationStatus: 'approved',
    lifecycleStatus: 'published',
  };
}

export class Bots {
  private readonly deployListeners = new Set<(botId: string) => void>();
  private readonly deleteListeners = new Set<(botId: string) => void>();

  private readonly db: Db;

  constructor(
    private readonly store: Store,
    private readonly channels: ChatChannels,
    private readonly webhooks: BotWebhooks,
    private readonly links: Links,
    private readonly caches: Caches,
    private readonly installations: Installations,
    private readonly sdkRuntime: SdkRuntimeSlot,
    private readonly llm: LlmIntegration,
  ) {
    this.db = store.db;
  }

  async list(actor: WorkspaceActor, query: ListBotsQuery): Promise<Page<BotSummary>> {
    const pageSize = pageSizeOf(query);
    const sortField = query.sortField ?? 'createdAt';
    const keyset = new Keyset(SORT_COLUMNS[sortField], query.sortDirection ?? 'desc', 'bots.id');
    const cursor = keyset.decode(query.nextToken);
    let select = this.db
      .selectFrom('bots')
      .select(['id', 'name', 'type', 'status', 'deployed_at', 'created_at', 'updated_at'])
      .where('workspace_id', '=', actor.workspaceId)
      .where('dev', '=', query.dev ? 1 : 0)
      .where(notDraftTwin);
    const tagged = hasAllTags('bots.id', query.tags ?? {});
    if (tagged) select = select.where(tagged);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy(SORT_COLUMNS[sortField], keyset.direction)
      .orderBy('bots.id', keyset.direction)
      .limit(pageSize + 1)
      .execute();
    const page = keyset.page(rows, pageSize, (r) => [
      sortField === 'createdAt' ? r.created_at : r.updated_at,
      r.id,
    ]);
    return withTags(this.db, page, (r, tags) => ({
      id: r.id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      name: r.name,
      ...(r.deployed_at !== null && { deployedAt: r.deployed_at }),
      tags,
      type: r.type,
      status: r.status,
    }));
  }

  async get(actor: WorkspaceActor, botId: string, keyedBy: IntegrationsKeyedBy = 'id'): Promise<Bot> {
    return this.toBot(await this.requireRow(actor, botId), can(actor.role, 'bots.write'), keyedBy);
  }

  /** `draftOf`: the bot is the draft twin of that one (domain/bots/draft-tests.ts), made with the link. */
  async create(actor: WorkspaceActor, body: CreateBotBody, draftOf?: string): Promise<Bot> {
    requireRole(actor.role, 'bots.write');
    const id = newId('bot');
    const now = nowIso();
    const definition: Definition = {
      ...emptyDefinition(),
      configuration: { data: body.configuration?.data ?? {}, schema: body.configuration?.schema ?? {} },
      user: { tags: body.user?.tags ?? {} },
      conversation: { tags: body.conversation?.tags ?? {} },
      message: { tags: body.message?.tags ?? {} },
      states: body.states ?? {},
      events: body.events ?? {},
      recurringEvents: body.recurringEvents ?? {},
      subscriptions: { events: body.subscriptions?.events ?? null },
      actions: body.actions ?? {},
      medias: body.medias ?? [],
      ...(body.maxExecutionTime !== undefined && { maxExecutionTime: body.maxExecutionTime }),
      ...(body.url !== undefined && { url: body.url }),
    };
    // A dev bot with a `url` is an SDK bot whose handler runs in its developer's process.
    const runtime =
      this.sdkRuntime.runtimeOf(body.code ?? null) ?? (body.dev && body.url ? SDK_RUNTIME : null);
    const row: Row<'bots'> = {
      id,
      workspace_id: actor.workspaceId,
      name: body.name ?? `bot-${id.slice(-8).toLowerCase()}`,
      description: body.description ?? null,
      dev: body.dev ? 1 : 0,
      type: body.type ?? 'studio',
      status: 'active',
      signing_secret: newSigningSecret(),
      created_by: actor.accountId,
      deployed_at: body.code !== undefined || body.url !== undefined ? now : null,
      definition: JSON.stringify(definition),
      secrets: JSON.stringify(body.secrets ?? {}),
      code: body.code ?? null,
      runtime,
      workflow_updates: workflowUpdatesOf(body.code ?? null, runtime),
      version_id: null,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('bots').values(row).execute();
      if (draftOf !== undefined)
        await trx.insertInto('bot_draft_twins').values({ bot_id: draftOf, twin_id: id }).execute();
      await this.channels.create(trx, id);
      await this.webhooks.create(trx, id);
      await insertTags(trx, id, body.tags ?? {});
      row.version_id = await this.recordDeploy(trx, actor, row, body.versionDescription);
    });
    if (body.code !== undefined) this.deployed(id);
    return this.toBot(row, true);
  }

  /** Calls `listener` with the bot's id once it is deleted (what runs its code stops it); answers how to stop. */
  onDelete(listener: (botId: string) => void): () => void {
    this.deleteListeners.add(listener);
    return () => this.deleteListeners.delete(listener);
  }

  /** Calls `listener` with the bot's id after each deploy of code (what runs it may have to know); answers how to stop. */
  onDeploy(listener: (botId: string) => void): () => void {
    this.deployListeners.add(listener);
    return () => this.deployListeners.delete(listener);
  }

  private deployed(botId: string): void {
    for (const listener of this.deployListeners) listener(botId);
  }

  /** `keyedBy`: how `body.integrations` (and the answer's) are keyed (`x-multiple-integrations`). */
  async update(
    actor: WorkspaceActor,
    botId: string,
    body: UpdateBotBody,
    keyedBy: IntegrationsKeyedBy = 'id',
  ): Promise<Bot> {
    if (actor.itself !== undefined) return this.updateItself(actor, botId, body, keyedBy);
    requireRole(actor.role, 'bots.write');
    for (;;) {
      const updated = await this.updateAsRead(actor, botId, body, keyedBy);
      if (updated) return updated;
    }
  }

  /**
   * The update decided on the bot's row as read, written if the row is still that one once held (none
   * otherwise: another update committed meanwhile, and this one is decided again on what it left).
   */
  private async updateAsRead(
    actor: WorkspaceActor,
    botId: string,
    body: UpdateBotBody,
    keyedBy: IntegrationsKeyedBy,
  ): Promise<Bot | undefined> {
    const current = await this.requireRow(actor, botId);
    const def = JSON.parse(current.definition) as Definition;
    const now = nowIso();
    // `bp dev` deploys a dev bot as `bp deploy` an SDK bundle, its code being the `url`'s.
    const devDeploy = current.dev === 1 && typeof body.url === 'string';
    const runtime =
      body.code !== undefined
        ? this.sdkRuntime.runtimeOf(body.code)
        : (current.runtime ?? (devDeploy ? SDK_RUNTIME : null));
    const llm = applyLlmAliases(def.llmAliases ?? {}, body.integrations ?? {}, {
      now,
      deploy: (body.code !== undefined && runtime === SDK_RUNTIME) || devDeploy,
    });
    await this.refuseTakenAliases(botId, llm.added);
    const next: Definition = {
      ...def,
      // `bp deploy` sends the schema alone: the values set before stay.
      configuration: {
        data: body.configuration?.data ?? def.configuration.data,
        schema: body.configuration?.schema ?? def.configuration.schema,
      },
      user: { tags: mergeMap(def.user.tags, body.user?.tags) },
      conversation: { tags: mergeMap(def.conversation.tags, body.conversation?.tags) },
      message: { tags: mergeMap(def.message.tags, body.message?.tags) },
      states: mergeMap(def.states, body.states),
      events: mergeMap(def.events, body.events),
      recurringEvents: mergeMap(def.recurringEvents, body.recurringEvents),
      actions: mergeMap(def.actions, body.actions),
      integrations: def.integrations,
      llmAliases: llm.aliases,
      plugins: applyPluginChanges(def.plugins, body.plugins, now),
      subscriptions: body.subscriptions
        ? {
            events:
              body.subscriptions.events === null
                ? null
                : mergeMap(def.subscriptions.events ?? {}, body.subscriptions.events),
          }
        : def.subscriptions,
      medias: body.medias ?? def.medias,
      alwaysAlive: body.alwaysAlive ?? def.alwaysAlive,
    };
    if (body.maxExecutionTime !== undefined) next.maxExecutionTime = body.maxExecutionTime;
    if (body.blocked !== undefined) next.blocked = body.blocked;
    if (body.authentication !== undefined) next.authentication = body.authentication;
    if (body.layers !== undefined) next.layers = body.layers;
    if (body.url === null) delete next.url;
    else if (body.url !== undefined) next.url = body.url;

    const deploys = body.code !== undefined || (body.url !== undefined && body.url !== null);
    const row: Row<'bots'> = {
      ...current,
      name: body.name ?? current.name,
      description: body.description ?? current.description,
      type: body.type ?? current.type,
      code: body.code ?? current.code,
      runtime,
      workflow_updates:
        body.code === undefined ? current.workflow_updates : workflowUpdatesOf(body.code, runtime),
      deployed_at: deploys ? now : current.deployed_at,
      definition: JSON.stringify(next),
      secrets: JSON.stringify(mergeMap(JSON.parse(current.secrets) as MapOf<string>, body.secrets)),
      updated_at: now,
    };
    const installed = await this.db.transaction().execute(async (trx) => {
      // The bot's row first: it is held until the commit, so a deploy beside this one waits and numbers
      // its version after this one's.
      const held = await this.requireRow(actor, botId, trx, true);
      if (!sameRow(held, current)) return undefined;
      await trx.updateTable('bots').set(row).where('id', '=', botId).execute();
      if (body.code !== undefined) {
        row.version_id = await this.recordDeploy(trx, actor, row, body.versionDescription);
        await trx.updateTable('bots').set({ version_id: row.version_id }).where('id', '=', botId).execute();
      }
      await applyTagChanges(trx, botId, body.tags ?? {});
      return this.updateIntegrations(trx, { id: botId, workspaceId: actor.workspaceId }, llm.others, {
        keepChat: (body.code !== undefined && row.runtime === SDK_RUNTIME) || devDeploy,
        keyedBy,
      });
    });
    if (!installed) return undefined;
    this.caches.botChanged(botId);
    // A dev bot's new `url` is a deploy of its code too: its handler is sent `register` there.
    if (body.code !== undefined || devDeploy) this.deployed(botId);
    this.installations.changed(installed);
    return this.toBot(row, true, keyedBy);
  }

  /**
   * The version a deploy of `row.code` makes (bot-versions.ts), in its transaction: its id, which the
   * bot's row names; null when the deploy leaves the bot without code to run.
   */
  private async recordDeploy(
    trx: Executor,
    actor: WorkspaceActor,
    row: Row<'bots'>,
    description: string | undefined,
  ): Promise<string | null> {
    if (row.code === null || row.runtime === null) return null;
    const version = await recordVersion(
      trx,
      row.id,
      { code: row.code, runtime: row.runtime, definition: row.definition },
      { ...(description !== undefined && { description }), createdBy: actor.accountId },
    );
    return version.id;
  }

  /**
   * Makes the bot run one of its versions again (`deployBotVersion`), older or newer than the one it
   * runs, in one update: its code and definition become the version's, but what an operator set since
   * stays (the configuration's values, secrets, integrations, the llm aliases), as do its tables (a
   * version's schemas are kept to read, not applied: rolling back never drops a column or its data).
   * Conversations go on: each one's next turn runs the version deployed then, its dialog where it stood
   * when the version has its node (engine/turn.ts).
   */
  async deployVersion(actor: WorkspaceActor, botId: string, versionId: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await this.db.transaction().execute(async (trx) => {
      const current = await this.requireRow(actor, botId, trx, true);
      const version = await requireVersion(trx, botId, versionId);
      const def = JSON.parse(current.definition) as Definition;
      const kept = JSON.parse(version.definition) as Definition;
      const definition: Definition = {
        ...kept,
        configuration: { schema: kept.configuration.schema, data: def.configuration.data },
        integrations: def.integrations,
        ...(def.llmAliases !== undefined && { llmAliases: def.llmAliases }),
      };
      // Checked again: this server may no longer run what it ran then (a package format, a sandbox).
      const runtime = this.sdkRuntime.runtimeOf(version.code);
      const now = nowIso();
      await trx
        .updateTable('bots')
        .set({
          code: version.code,
          runtime,
          workflow_updates: workflowUpdatesOf(version.code, runtime),
          definition: JSON.stringify(definition),
          version_id: version.id,
          deployed_at: now,
          updated_at: now,
        })
        .where('id', '=', botId)
        .execute();
    });
    this.caches.botChanged(botId);
    this.deployed(botId);
  }

  /**
   * A bot's own key changes the bot's tags and nothing else: the ADK runtime keeps its state there; its
   * code, definition, secrets and integrations stay with the members who may deploy it.
   */
  private async updateItself(
    actor: WorkspaceActor,
    botId: string,
    body: UpdateBotBody,
    keyedBy: IntegrationsKeyedBy,
  ): Promise<Bot> {
    const others = Object.keys(body).filter((field) => field !== 'tags');
    if (others.length > 0)
      throw forbidden(
        `A bot's own API key may change only the bot's tags, not ${others.map((f) => `"${f}"`).join(', ')}`,
      );
    await this.requireRow(actor, botId);
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('bots').set({ updated_at: nowIso() }).where('id', '=', botId).execute();
      await applyTagChanges(trx, botId, body.tags ?? {});
    });
    this.caches.botChanged(botId);
    return this.get(actor, botId, keyedBy);
  }

  /** An alias of the llm integration may not be the alias of an integration the bot installed: both answer `<alias>:…`. */
  private async refuseTakenAliases(botId: string, aliases: string[]): Promise<void> {
    for (const alias of aliases) {
      if (await this.installations.byAlias(botId, alias)) {
        throw new ApiError(
          'AlreadyExists',
          `integrations.${alias}: the bot has an integration installed under this alias already`,
        );
      }
    }
  }

  /** The aliases the bot gave the built-in llm integration besides `llm` (what `<alias>:generateContent` may name). */
  async llmAliases(botId: string): Promise<MapOf<LlmAlias>> {
    const row = await this.db
      .selectFrom('bots')
      .select('definition')
      .where('id', '=', botId)
      .executeTakeFirst();
    return row ? ((JSON.parse(row.definition) as Definition).llmAliases ?? {}) : {};
  }

  /** A new signing secret for the bot's webhooks: the old one stops holding at once. */
  async rotateSigningSecret(actor: WorkspaceActor, botId: string): Promise<string> {
    requireRole(actor.role, 'bots.write');
    await this.requireRow(actor, botId);
    const secret = newSigningSecret();
    await this.db
      .updateTable('bots')
      .set({ signing_secret: secret, updated_at: nowIso() })
      .where('id', '=', botId)
      .execute();
    this.caches.botChanged(botId);
    return secret;
  }

  async delete(actor: WorkspaceActor, botId: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await this.requireRow(actor, botId);
    const twins = await this.db
      .selectFrom('bot_draft_twins')
      .select('twin_id')
      .where('bot_id', '=', botId)
      .execute();
    // Its draft twin goes with it, as what runs a bot's code is told of each.
    const gone = [botId, ...twins.map((t) => t.twin_id)];
    await this.db.transaction().execute(async (trx) => {
      await deleteTags(trx, gone);
      await trx.deleteFrom('bots').where('id', 'in', gone).execute();
    });
    for (const id of gone) {
      this.caches.botChanged(id);
      for (const listener of this.deleteListeners) listener(id);
    }
  }

  /**
   * The built-in chat channel can be disabled, and its configuration (given whole, as the hosted API
   * replaces an integration's configuration) sets its key mode, the origins browsers may call it from
   * and the look of its webchat. `keepChat`: a `bp deploy` (or `bp dev`) sends null for every integration
   * its project does not declare, and the chat channel is built in, not declared, so the deploy of an SDK bundle
   * does not disable it (`enabled: false` does). Every other key is an installation (by alias, or by
   * integration id: `keyedBy`), installed, changed or (null) uninstalled.
   */
  private async updateIntegrations(
    trx: Executor,
    bot: { id: string; workspaceId: string },
    changes: UpdateBotBody['integrations'],
    { keepChat, keyedBy }: { keepChat: boolean; keyedBy: IntegrationsKeyedBy },
  ): Promise<InstallationChanges> {
    const botId = bot.id;
    const { [CHAT_INTEGRATION]: chat, ...others } = changes ?? {};
    // Under the alias `chat`, another integration is refused by the installations, naming the field.
    if (chat && chat.integrationId !== undefined && chat.integrationId !== CHAT_INTEGRATION)
      return this.installations.apply(trx, bot, { ...others, [CHAT_INTEGRATION]: chat }, keyedBy);
    for (const change of chat === undefined ? [] : [chat]) {
      if (change === null) {
        if (!keepChat) await this.channels.update(trx, botId, { enabled: false });
        continue;
      }
      const configuration =
        change.configuration === undefined ? undefined : checkChatConfiguration(change.configuration);
      await this.channels.update(trx, botId, {
        ...(typeof change.enabled === 'boolean' && { enabled: change.enabled }),
        ...(configuration !== undefined && {
          encryptionKey: configuration.encryptionKey ?? null,
          allowedOrigins: configuration.allowedOrigins ? checkOrigins(configuration.allowedOrigins) : null,
          webchat: configuration.webchat ?? {},
          fallbackMessage: configuration.fallbackMessage ?? null,
        }),
      });
    }
    return this.installations.apply(trx, bot, others, keyedBy);
  }

  /**
   * The bots whose code a runtime here runs, and whose schedules fire: a draft twin's do not (a draft is
   * a test until it is deployed).
   */
  async withRuntime(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('bots')
      .select('id')
      .where('runtime', 'is not', null)
      .where(notDraftTwin)
      .execute();
    return rows.map((r) => r.id);
  }

  /** When the bot last changed, and whether a runtime here runs its code: cheap, for caches. */
  async runtimeStamp(botId: string): Promise<RuntimeStamp | undefined> {
    return (await this.caches.botStamps.through(botId, async () => {
      const row = await this.db
        .selectFrom('bots')
        .select(['runtime', 'updated_at', 'dev'])
        .where('id', '=', botId)
        .executeTakeFirst();
      return row && { runtime: row.runtime, updatedAt: row.updated_at, dev: row.dev === 1 };
    })) as RuntimeStamp | undefined;
  }

  /** What a runtime needs of a bot to run it: its code, configuration and secrets (values included). */
  async forRuntime(botId: string): Promise<RuntimeBot | undefined> {
    const row = await this.db
      .selectFrom('bots')
      .leftJoin('bot_draft_twins', 'bot_draft_twins.twin_id', 'bots.id')
      .selectAll('bots')
      .select('bot_draft_twins.bot_id as draft_of')
      .where('bots.id', '=', botId)
      .executeTakeFirst();
    if (!row) return undefined;
    const def = JSON.parse(row.definition) as Definition;
    return {
      draftOf: row.draft_of ?? undefined,
      botId: row.id,
      workspaceId: row.workspace_id,
      updatedAt: row.updated_at,
      code: row.code,
      runtime: row.runtime,
      deployedAt: row.deployed_at,
      // As its code reads it: the schema's defaults where the data leaves a value out.
      configuration: withSchemaDefaults(def.configuration.schema, def.configuration.data),
      secrets: JSON.parse(row.secrets) as MapOf<string>,
      maxExecutionTime: def.maxExecutionTime,
      recurringEvents: def.recurringEvents,
      actions: def.actions,
      devUrl: row.dev === 1 ? def.url : undefined,
    };
  }

  /**
   * A bot of another workspace does not exist for this actor. `held`: the transaction rewrites the row,
   * which is held until it ends.
   */
  private async requireRow(
    actor: WorkspaceActor,
    botId: string,
    db: Executor = this.db,
    held = false,
  ): Promise<Row<'bots'>> {
    const row = await db
      .selectFrom('bots')
      .selectAll()
      .where('id', '=', botId)
      .where('workspace_id', '=', actor.workspaceId)
      .$if(held, (q) => q.modifyEnd(this.store.sql.heldRows))
      .executeTakeFirst();
    if (!row) throw notFound('Bot', botId);
    return row;
  }

  private async toBot(row: Row<'bots'>, secrets: boolean, keyedBy: IntegrationsKeyedBy = 'id'): Promise<Bot> {
    const def = JSON.parse(row.definition) as Definition;
    const tags = (await loadTags(this.db, [row.id])).get(row.id) ?? {};
    const [channel, installed, llmConfigured] = await Promise.all([
      this.channels.forBot(row.id),
      this.installations.forBot(row.id, keyedBy),
      this.llm.configuredFor(row.workspace_id),
    ]);
    return {
      id: row.id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      name: row.name,
      ...(row.description !== null && { description: row.description }),
      ...(row.deployed_at !== null && { deployedAt: row.deployed_at }),
      ...(row.runtime !== null && { runtime: row.runtime }),
      dev: row.dev === 1,
      type: row.type,
      status: row.status,
      tags,
      // A role that may not change the bot does not see what signs for it.
      signingSecret: secrets ? row.signing_secret : '',
      integrations: {
        ...(channel && { [CHAT_INTEGRATION]: chatIntegration(channel, this.links, secrets) }),
        [LLM_INTEGRATION]: llmIntegration(LLM_INTEGRATION, llmConfigured, {
          enabled: true,
          createdAt: row.created_at,
          updatedAt: row.created_at,
        }),
        ...installed,
        ...Object.fromEntries(
          Object.entries(def.llmAliases ?? {}).map(([alias, since]) => [
            alias,
            llmIntegration(alias, llmConfigured, since),
          ]),
        ),
      },
      plugins: Object.fromEntries(Object.entries(def.plugins).map(([alias, p]) => [alias, pluginView(p)])),
      ...(def.maxExecutionTime !== undefined && { maxExecutionTime: def.maxExecutionTime }),
      user: def.user,
      conversation: def.conversation,
      message: def.message,
      states: def.states,
      configuration: def.configuration,
      events: def.events,
      recurringEvents: Object.fromEntries(
        Object.entries(def.recurringEvents).map(([k, v]) => [
          k,
          { ...v, failedAttempts: 0, lastFailureReason: null },
        ]),
      ),
      subscriptions: def.subscriptions,
      actions: def.actions,
      secrets: Object.keys(JSON.parse(row.secrets) as MapOf<string>),
      ...(row.created_by !== null && { createdBy: row.created_by }),
      alwaysAlive: def.alwaysAlive,
      medias: def.medias,
      ...(row.version_id !== null && { versionId: row.version_id }),
    };
  }
}

/** 1 when the bot's code takes `workflow_update` events (runtime/workflow-updates.ts): read at each deploy. */
function workflowUpdatesOf(code: string | null, runtime: BotRuntime | null): Flag {
  return runtime === SDK_RUNTIME && code !== null && takesWorkflowUpdates(code) ? 1 : 0;
}

/** Whether a row read again is the one read before: no column of it changed meanwhile. */
function sameRow(row: Row<'bots'>, before: Row<'bots'>): boolean {
  return (Object.keys(before) as (keyof Row<'bots'>)[]).every((column) => row[column] === before[column]);
}
