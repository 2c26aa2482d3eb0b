import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { Links } from '../bots/links.ts';
import { ApiError, invalidPayload, keptErrorText } from '../shared/errors.ts';
import { fromJson, isJsonObject } from '../shared/json.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';
import type { InstallationStatus } from '../../value-sets.ts';
import { isBuiltInName } from './built-ins.ts';
import { resolveInstallable } from './installable.ts';

/** An integration installed on a bot, as `getBot` shows it in `integrations` (keyed by alias, or by integration id). */
export interface BotInstallation {
  id: string;
  name: string;
  version: string;
  enabled: boolean;
  webhookId: string;
  webhookUrl: string;
  configurationType: string | null;
  configuration: JsonObject;
  status: InstallationStatus;
  statusReason: string | null;
  disabledChannels: string[];
  createdAt: string;
  updatedAt: string;
  title: string;
  description: string;
  iconUrl: string;
  public: boolean;
  visibility: string;
  verificationStatus: string;
  lifecycleStatus: string;
}

/** One installation, as what runs the integration needs it. */
export interface Installation {
  botId: string;
  /** The bot's workspace: the integration runs for it, whichever workspace published the integration. */
  workspaceId: string;
  integrationId: string;
  integrationName: string;
  /** What the bot calls it: `<alias>:<action>`, `<alias>:<event>`, its conversations' `integration`. */
  alias: string;
  enabled: boolean;
  configuration: JsonObject;
  configurationType: string | null;
  webhookId: string;
}

/** What an update of a bot's integrations changed: which to `register`, which to `unregister`. */
export interface InstallationChanges {
  registered: Installation[];
  unregistered: Installation[];
}

/**
 * How the keys of `updateBot`'s and `getBot`'s `integrations` are read: by alias (the hosted API's,
 * with `x-multiple-integrations: true`, what every `bp` since 4.20 sends) or by integration id (older
 * CLIs and clients: an installation made so takes the integration's name as its alias).
 */
export type IntegrationsKeyedBy = 'alias' | 'id';

/** How a request's `x-multiple-integrations` header (its value) keys the bot's `integrations`. */
export function integrationsKeyedBy(header: string | undefined): IntegrationsKeyedBy {
  return header?.toLowerCase() === 'true' ? 'alias' : 'id';
}

/** An alias: what `<alias>:<action>` names, so no `:`; an integration's name (`handle/name`) is one. */
const ALIAS = /^[A-Za-z0-9][A-Za-z0-9_/-]{0,199}$/;

const NO_CHANGES: InstallationChanges = { registered: [], unregistered: [] };

/**
 * The integrations installed on bots: the `integrations` of `updateBot` (keyed by alias or by
 * integration id, `null` uninstalls), each under an alias, with the bot's configuration of it and a
 * webhook of its own.
 */
export class Installations {
  private readonly listeners = new Set<(changes: InstallationChanges) => void>();

  constructor(
    private readonly db: Db,
    private readonly links: Links,
  ) {}

  /** Calls `listener` after each committed change of installations (their processes are told). */
  onChange(listener: (changes: InstallationChanges) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(changes: InstallationChanges): void {
    if (changes.registered.length === 0 && changes.unregistered.length === 0) return;
    for (const listener of this.listeners) listener(changes);
  }

  /**
   * Applies a bot's changes of integrations in its update's transaction. An integration the
   * workspace has not deployed is refused, naming it: nothing of the update is applied.
   */
  async apply(
    trx: Executor,
    bot: { id: string; workspaceId: string },
    changes: Record<string, JsonObject | null>,
    keyedBy: IntegrationsKeyedBy,
  ): Promise<InstallationChanges> {
    const byAlias = keyedBy === 'alias' ? changes : await this.aliasesOfIds(trx, bot, changes);
    const entries = Object.entries(byAlias);
    if (entries.length === 0) return NO_CHANGES;
    const result: InstallationChanges = { registered: [], unregistered: [] };
    // Removals first: an alias given up may be taken by another integration in the same update.
    const ordered = [...entries.filter(([, c]) => c === null), ...entries.filter(([, c]) => c !== null)];
    const now = nowIso();
    for (const [alias, change] of ordered) await this.applyOne(trx, bot, alias, change, now, result);
    return result;
  }

  /**
   * The id-keyed form, read as aliases: a change of an integration applies to each of the bot's
   * installations of it, and installs it, under its name, where there is none.
   */
  private async aliasesOfIds(
    trx: Executor,
    bot: { id: string; workspaceId: string },
    changes: Record<string, JsonObject | null>,
  ): Promise<Record<string, JsonObject | null>> {
    const byAlias: Record<string, JsonObject | null> = {};
    for (const [id, change] of Object.entries(changes)) {
      const rows = await trx
        .selectFrom('bot_installations')
        .select('alias')
        .where('bot_id', '=', bot.id)
        .where('integration_id', '=', id)
        .execute();
      const named = { ...change, integrationId: id };
      if (rows.length > 0) {
        for (const { alias } of rows) byAlias[alias] = change === null ? null : named;
        continue;
      }
      if (change === null) continue;
      const installable = await resolveInstallable(trx, bot.workspaceId, id);
      if (installable?.kind !== 'deployed') throw unknownIntegration(`integrations.${id}`, id);
      byAlias[installable.name] = named;
    }
    return byAlias;
  }

  private async applyOne(
    trx: Executor,
    bot: { id: string; workspaceId: string },
    alias: string,
    change: JsonObject | null,
    now: string,
    result: InstallationChanges,
  ): Promise<void> {
    const before = await trx
      .selectFrom('bot_installations')
      .innerJoin('integrations', 'integrations.id', 'bot_installations.integration_id')
      .selectAll('bot_installations')
      .select(['integrations.name'])
      .where('bot_installations.bot_id', '=', bot.id)
      .where('bot_installations.alias', '=', alias)
      .executeTakeFirst();
    const installedBefore =
      before && toInstallation(before, { integrationName: before.name, botWorkspaceId: bot.workspaceId });
    if (change === null) {
      if (!before) return;
      await trx
        .deleteFrom('bot_installations')
        .where('bot_id', '=', bot.id)
        .where('alias', '=', alias)
        .execute();
      if (installedBefore?.enabled) result.unregistered.push(installedBefore);
      return;
    }
    const field = `integrations.${alias}`;
    const integrationId = change.integrationId ?? before?.integration_id;
    if (typeof integrationId !== 'string')
      throw invalidPayload(`${field}.integrationId: the id of the integration to install is required`);
    const installable = await resolveInstallable(trx, bot.workspaceId, integrationId);
    if (!installable) throw unknownIntegration(`${field}.integrationId`, integrationId);
    if (installable.kind === 'builtIn') {
      // The built-ins are there for every bot, each under its own name: nothing to install.
      if (installable.name === alias) return;
      throw invalidPayload(
        `${field}.integrationId: the built-in "${installable.name}" integration is installed under its own name, "${installable.name}", only`,
      );
    }
    if (isBuiltInName(alias))
      throw invalidPayload(
        `${field}: "${alias}" is the name of a built-in integration, not an alias to give another`,
      );
    if (!ALIAS.test(alias))
      throw invalidPayload(
        `${field}: an alias is letters, digits, "-", "_" and "/" (up to 200), starting with a letter or digit`,
      );
    const enabled = change.enabled === undefined ? (before?.enabled ?? 1) : enabledOf(field, change.enabled);
    const configuration =
      change.configuration === undefined
        ? before
          ? fromJson<JsonObject>(before.configuration)
          : {}
        : configurationOf(field, change.configuration);
    const row: Row<'bot_installations'> = {
      bot_id: bot.id,
      alias,
      integration_id: installable.id,
      enabled,
      configuration: JSON.stringify(configuration),
      configuration_type:
        change.configurationType === undefined
          ? (before?.configuration_type ?? null)
          : configurationTypeOf(field, change.configurationType),
      disabled_channels:
        change.disabledChannels === undefined
          ? (before?.disabled_channels ?? '[]')
          : JSON.stringify(disabledChannelsOf(field, change.disabledChannels)),
      webhook_id: before?.webhook_id ?? randomUUID(),
      status: enabled === 1 ? 'registration_pending' : (before?.status ?? 'registration_pending'),
      status_reason: null,
      created_at: before?.created_at ?? now,
      updated_at: now,
    };
    if (before) {
      await trx
        .updateTable('bot_installations')
        .set(row)
        .where('bot_id', '=', bot.id)
        .where('alias', '=', alias)
        .execute();
    } else {
      await trx.insertInto('bot_installations').values(row).execute();
    }
    const installed = toInstallation(row, {
      integrationName: installable.name,
      botWorkspaceId: bot.workspaceId,
    });
    if (enabled === 1) result.registered.push(installed);
    else if (installedBefore?.enabled) result.unregistered.push(installedBefore);
  }

  /** A bot's installations, as `getBot` shows them: keyed by alias, or by integration id (the first of each). */
  async forBot(botId: string, keyedBy: IntegrationsKeyedBy): Promise<Record<string, BotInstallation>> {
    const rows = await this.db
      .selectFrom('bot_installations')
      .innerJoin('integrations', 'integrations.id', 'bot_installations.integration_id')
      .selectAll('bot_installations')
      .select(['integrations.name', 'integrations.version', 'integrations.definition'])
      .where('bot_installations.bot_id', '=', botId)
      .orderBy('bot_installations.created_at')
      .orderBy('bot_installations.alias')
      .execute();
    const entries = rows.map((row): [string, BotInstallation] => {
      const definition = fromJson<{ title?: string; description?: string }>(row.definition);
      return [
        keyedBy === 'alias' ? row.alias : row.integration_id,
        {
          id: row.integration_id,
          name: row.name,
          version: row.version,
          enabled: row.enabled === 1,
          webhookId: row.webhook_id,
          webhookUrl: this.links.webhookUrl(row.webhook_id),
          configurationType: row.configuration_type,
          configuration: fromJson<JsonObject>(row.configuration),
          status: row.status,
          statusReason: row.status_reason,
          disabledChannels: fromJson<string[]>(row.disabled_channels),
          createdAt: row.created_at,
          updatedAt: row.updated_at,
          title: definition.title ?? row.name,
          description: definition.description ?? '',
          iconUrl: '',
          public: false,
          visibility: 'private',
          verificationStatus: 'unapproved',
          lifecycleStatus: 'published',
        },
      ];
    });
    // By id, an integration installed under several aliases shows its oldest installation (then by alias).
    const shown: Record<string, BotInstallation> = {};
    for (const [key, installation] of entries) if (!Object.hasOwn(shown, key)) shown[key] = installation;
    return shown;
  }

  /** The installation a webhook id names. */
  async reach(webhookId: string): Promise<Installation | undefined> {
    return this.one((q) => q.where('bot_installations.webhook_id', '=', webhookId));
  }

  /** The bot's installation under `alias` (`<alias>:<action>`, a conversation's `integration`). */
  async byAlias(botId: string, alias: string): Promise<Installation | undefined> {
    return this.one((q) =>
      q.where('bot_installations.bot_id', '=', botId).where('bot_installations.alias', '=', alias),
    );
  }

  /** What the installation's `register` answered, as `getBot` shows it (the reason's start, if long). */
  async setStatus(
    installation: Installation,
    status: InstallationStatus,
    reason: string | null,
  ): Promise<void> {
    await this.db
      .updateTable('bot_installations')
      .set({ status, status_reason: reason === null ? null : keptErrorText(reason) })
      .where('bot_id', '=', installation.botId)
      .where('alias', '=', installation.alias)
      .where('webhook_id', '=', installation.webhookId)
      .execute();
  }

  private async one(
    where: (q: ReturnType<Installations['joined']>) => ReturnType<Installations['joined']>,
  ): Promise<Installation | undefined> {
    const row = await where(this.joined()).executeTakeFirst();
    return row && toInstallation(row, { integrationName: row.name, botWorkspaceId: row.workspace_id });
  }

  private joined() {
    return this.db
      .selectFrom('bot_installations')
      .innerJoin('integrations', 'integrations.id', 'bot_installations.integration_id')
      .innerJoin('bots', 'bots.id', 'bot_installations.bot_id')
      .selectAll('bot_installations')
      .select(['integrations.name', 'bots.workspace_id']);
  }
}

function toInstallation(
  row: Row<'bot_installations'>,
  of: { integrationName: string; botWorkspaceId: string },
): Installation {
  return {
    botId: row.bot_id,
    workspaceId: of.botWorkspaceId,
    integrationId: row.integration_id,
    integrationName: of.integrationName,
    alias: row.alias,
    enabled: row.enabled === 1,
    configuration: fromJson<JsonObject>(row.configuration),
    configurationType: row.configuration_type,
    webhookId: row.webhook_id,
  };
}

/** An integration id that names nothing the bot may install, refused naming the field that gave it. */
function unknownIntegration(field: string, id: string): ApiError {
  return new ApiError(
    'ReferenceNotFound',
    `${field}: no integration "${id}" in the workspace (Parley offers its built-in integrations and those deployed to the workspace with bp deploy)`,
  );
}

function enabledOf(field: string, value: Json): number {
  if (typeof value !== 'boolean') throw invalidPayload(`${field}.enabled must be a boolean`);
  return value ? 1 : 0;
}

function configurationOf(field: string, value: Json): JsonObject {
  if (!isJsonObject(value)) throw invalidPayload(`${field}.configuration must be an object`);
  return value;
}

function configurationTypeOf(field: string, value: Json): string | null {
  if (value !== null && typeof value !== 'string')
    throw invalidPayload(`${field}.configurationType must be a string or null`);
  return value;
}

function disabledChannelsOf(field: string, value: Json): string[] {
  if (!Array.isArray(value) || !value.every((c): c is string => typeof c === 'string'))
    throw invalidPayload(`${field}.disabledChannels must be an array of channel names`);
  return value;
}
