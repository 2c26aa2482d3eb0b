import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { Links } from '../bots/links.ts';
import { ApiError, invalidPayload, keptErrorText } from '../shared/errors.ts';
import { fromJson, isJsonObject } from '../shared/json.ts';
import type { Json, JsonObject } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';
import type { InstallationStatus } from '../../value-sets.ts';

/** An integration installed on a bot, as `getBot` shows it in `integrations` (keyed by the integration's id). */
export interface BotInstallation {
  id: string;
  name: string;
  version: string;
  enabled: boolean;
  webhookId: string;
  webhookUrl: string;
  configurationType: null;
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
  /** The bot's workspace (the integration's: a bot installs only its workspace's integrations). */
  workspaceId: string;
  integrationId: string;
  integrationName: string;
  enabled: boolean;
  configuration: JsonObject;
  webhookId: string;
}

/** What an update of a bot's integrations changed: which to `register`, which to `unregister`. */
export interface InstallationChanges {
  registered: Installation[];
  unregistered: Installation[];
}

const NO_CHANGES: InstallationChanges = { registered: [], unregistered: [] };

/**
 * The integrations installed on bots: the `integrations` of `updateBot` (keyed by integration id,
 * `null` uninstalls), each with the bot's configuration of it and a webhook of its own.
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
  ): Promise<InstallationChanges> {
    const ids = Object.keys(changes);
    if (ids.length === 0) return NO_CHANGES;
    const integrations = await trx
      .selectFrom('integrations')
      .select(['id', 'name', 'workspace_id'])
      .where('workspace_id', '=', bot.workspaceId)
      .where('id', 'in', ids)
      .execute();
    const known = new Map(integrations.map((i) => [i.id, { name: i.name, workspaceId: i.workspace_id }]));
    const current = await trx
      .selectFrom('bot_integrations')
      .selectAll()
      .where('bot_id', '=', bot.id)
      .where('integration_id', 'in', ids)
      .execute();
    const installed = new Map(current.map((row) => [row.integration_id, row]));
    const result: InstallationChanges = { registered: [], unregistered: [] };
    const now = nowIso();
    for (const [id, change] of Object.entries(changes)) {
      const integration = known.get(id);
      const before = installed.get(id);
      if (change === null) {
        if (!before || integration === undefined) continue;
        await trx
          .deleteFrom('bot_integrations')
          .where('bot_id', '=', bot.id)
          .where('integration_id', '=', id)
          .execute();
        if (before.enabled === 1) result.unregistered.push(toInstallation(before, integration));
        continue;
      }
      if (integration === undefined) {
        throw new ApiError(
          'ReferenceNotFound',
          `integrations.${id}: no integration of this id in the workspace (Parley offers the built-in "chat" channel and the integrations deployed to the workspace with bp deploy; it has no hub)`,
        );
      }
      const enabled = change.enabled === undefined ? (before?.enabled ?? 1) : enabledOf(id, change.enabled);
      const configuration =
        change.configuration === undefined
          ? before
            ? fromJson<JsonObject>(before.configuration)
            : {}
          : configurationOf(id, change.configuration);
      const row: Row<'bot_integrations'> = {
        bot_id: bot.id,
        integration_id: id,
        enabled,
        configuration: JSON.stringify(configuration),
        webhook_id: before?.webhook_id ?? randomUUID(),
        status: enabled === 1 ? 'registration_pending' : (before?.status ?? 'registration_pending'),
        status_reason: null,
        created_at: before?.created_at ?? now,
        updated_at: now,
      };
      if (before) {
        await trx
          .updateTable('bot_integrations')
          .set(row)
          .where('bot_id', '=', bot.id)
          .where('integration_id', '=', id)
          .execute();
      } else {
        await trx.insertInto('bot_integrations').values(row).execute();
      }
      if (enabled === 1) result.registered.push(toInstallation(row, integration));
      else if (before?.enabled === 1) result.unregistered.push(toInstallation(before, integration));
    }
    return result;
  }

  /** A bot's installations, as `getBot` shows them. */
  async forBot(botId: string): Promise<Record<string, BotInstallation>> {
    const rows = await this.db
      .selectFrom('bot_integrations')
      .innerJoin('integrations', 'integrations.id', 'bot_integrations.integration_id')
      .selectAll('bot_integrations')
      .select(['integrations.name', 'integrations.version', 'integrations.definition'])
      .where('bot_integrations.bot_id', '=', botId)
      .orderBy('bot_integrations.created_at')
      .execute();
    const entries = rows.map((row): [string, BotInstallation] => {
      const definition = fromJson<{ title?: string; description?: string }>(row.definition);
      return [
        row.integration_id,
        {
          id: row.integration_id,
          name: row.name,
          version: row.version,
          enabled: row.enabled === 1,
          webhookId: row.webhook_id,
          webhookUrl: this.links.webhookUrl(row.webhook_id),
          configurationType: null,
          configuration: fromJson<JsonObject>(row.configuration),
          status: row.status,
          statusReason: row.status_reason,
          disabledChannels: [],
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
    return Object.fromEntries(entries);
  }

  /** The installation a webhook id names. */
  async reach(webhookId: string): Promise<Installation | undefined> {
    return this.one((q) => q.where('bot_integrations.webhook_id', '=', webhookId));
  }

  /** The bot's installation of an integration of this name (`<name>:<action>`, a conversation's `integration`). */
  async byName(botId: string, name: string): Promise<Installation | undefined> {
    return this.one((q) =>
      q.where('bot_integrations.bot_id', '=', botId).where('integrations.name', '=', name),
    );
  }

  async get(botId: string, integrationId: string): Promise<Installation | undefined> {
    return this.one((q) =>
      q
        .where('bot_integrations.bot_id', '=', botId)
        .where('bot_integrations.integration_id', '=', integrationId),
    );
  }

  /** What the installation's `register` answered, as `getBot` shows it (the reason's start, if long). */
  async setStatus(
    installation: Installation,
    status: InstallationStatus,
    reason: string | null,
  ): Promise<void> {
    await this.db
      .updateTable('bot_integrations')
      .set({ status, status_reason: reason === null ? null : keptErrorText(reason) })
      .where('bot_id', '=', installation.botId)
      .where('integration_id', '=', installation.integrationId)
      .where('webhook_id', '=', installation.webhookId)
      .execute();
  }

  private async one(
    where: (q: ReturnType<Installations['joined']>) => ReturnType<Installations['joined']>,
  ): Promise<Installation | undefined> {
    const row = await where(this.joined()).executeTakeFirst();
    return row && toInstallation(row, { name: row.name, workspaceId: row.workspace_id });
  }

  private joined() {
    return this.db
      .selectFrom('bot_integrations')
      .innerJoin('integrations', 'integrations.id', 'bot_integrations.integration_id')
      .selectAll('bot_integrations')
      .select(['integrations.name', 'integrations.workspace_id']);
  }
}

function toInstallation(
  row: Row<'bot_integrations'>,
  { name, workspaceId }: { name: string; workspaceId: string },
): Installation {
  return {
    botId: row.bot_id,
    workspaceId,
    integrationId: row.integration_id,
    integrationName: name,
    enabled: row.enabled === 1,
    configuration: fromJson<JsonObject>(row.configuration),
    webhookId: row.webhook_id,
  };
}

function enabledOf(id: string, value: Json): number {
  if (typeof value !== 'boolean') throw invalidPayload(`integrations.${id}.enabled must be a boolean`);
  return value ? 1 : 0;
}

function configurationOf(id: string, value: Json): JsonObject {
  if (!isJsonObject(value)) throw invalidPayload(`integrations.${id}.configuration must be an object`);
  return value;
}
