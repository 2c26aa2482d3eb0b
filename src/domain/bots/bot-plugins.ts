import { invalidPayload } from '../shared/errors.ts';
import { isJsonObject } from '../shared/json.ts';
import type { Json, JsonObject } from '../shared/json.ts';

/** Which installation of the bot stands for an interface a plugin uses (`llm`, `hitl`...). */
// Types, not interfaces: they are JSON as they are (what `getBot` answers).
export type PluginInterfaceWiring = {
  integrationId: string;
  /** Absent: the bot's first installation of `integrationId`. */
  integrationAlias?: string;
  /** The interface's alias in the integration's definition, when it is not the interface's name. */
  integrationInterfaceAlias?: string;
};

/** Which installation of the bot stands for an integration a plugin uses. */
export type PluginIntegrationWiring = {
  integrationId: string;
  integrationAlias: string;
};

/**
 * A plugin installed on a bot under an alias, as `bp deploy` (CLI 7) sends it in `updateBot`'s
 * `plugins`: its id, configuration and wiring to the bot's installations. Its code is bundled into the
 * bot's own, so nothing of it runs here; the bot's definition keeps it.
 */
export interface BotPlugin {
  id: string;
  name: string;
  version: string;
  enabled: boolean;
  configuration: JsonObject;
  interfaces: Record<string, PluginInterfaceWiring>;
  integrations: Record<string, PluginIntegrationWiring>;
  createdAt: string;
  updatedAt: string;
}

/**
 * A bot's plugins after `updateBot`'s changes (keyed by alias; null removes one). An entry changes
 * what it gives; a new one needs its `id`. The wiring is read as the hosted API declares it; what else
 * the CLI sends of the plugin's package (its definition) is not kept.
 */
export function applyPluginChanges(
  current: Record<string, BotPlugin>,
  changes: Record<string, JsonObject | null> | undefined,
  now: string,
): Record<string, BotPlugin> {
  const next = { ...current };
  for (const [alias, change] of Object.entries(changes ?? {})) {
    if (change === null) {
      delete next[alias];
      continue;
    }
    const before = Object.hasOwn(current, alias) ? current[alias] : undefined;
    const field = `plugins.${alias}`;
    const id = change.id === undefined ? before?.id : text(`${field}.id`, change.id);
    if (id === undefined) throw invalidPayload(`${field}.id: the id of the plugin to install is required`);
    next[alias] = {
      id,
      name: optionalText(`${field}.name`, change.name) ?? before?.name ?? alias,
      version: optionalText(`${field}.version`, change.version) ?? before?.version ?? '',
      enabled:
        change.enabled === undefined ? (before?.enabled ?? true) : flag(`${field}.enabled`, change.enabled),
      configuration:
        change.configuration === undefined
          ? (before?.configuration ?? {})
          : object(`${field}.configuration`, change.configuration),
      interfaces:
        change.interfaces === undefined
          ? (before?.interfaces ?? {})
          : wirings(`${field}.interfaces`, change.interfaces, interfaceWiring),
      integrations:
        change.integrations === undefined
          ? (before?.integrations ?? {})
          : wirings(`${field}.integrations`, change.integrations, integrationWiring),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }
  return next;
}

/** A plugin as `getBot` answers it (the hosted API's fields). */
export function pluginView(plugin: BotPlugin): JsonObject {
  return {
    ...plugin,
    title: plugin.name,
    description: '',
    iconUrl: '',
    readmeUrl: '',
    public: false,
    visibility: 'private',
    lifecycleStatus: 'published',
  };
}

function interfaceWiring(field: string, value: JsonObject): PluginInterfaceWiring {
  const integrationAlias = optionalText(`${field}.integrationAlias`, value.integrationAlias);
  const interfaceAlias = optionalText(`${field}.integrationInterfaceAlias`, value.integrationInterfaceAlias);
  return {
    integrationId: text(`${field}.integrationId`, value.integrationId),
    ...(integrationAlias !== undefined && { integrationAlias }),
    ...(interfaceAlias !== undefined && { integrationInterfaceAlias: interfaceAlias }),
  };
}

function integrationWiring(field: string, value: JsonObject): PluginIntegrationWiring {
  return {
    integrationId: text(`${field}.integrationId`, value.integrationId),
    integrationAlias: text(`${field}.integrationAlias`, value.integrationAlias),
  };
}

function wirings<T>(
  field: string,
  value: Json,
  read: (field: string, value: JsonObject) => T,
): Record<string, T> {
  const map = object(field, value);
  return Object.fromEntries(
    Object.entries(map).map(([alias, entry]) => [
      alias,
      read(`${field}.${alias}`, object(`${field}.${alias}`, entry)),
    ]),
  );
}

function text(field: string, value: Json | undefined): string {
  if (typeof value !== 'string' || value === '') throw invalidPayload(`${field} must be a non-empty string`);
  return value;
}

function optionalText(field: string, value: Json | undefined): string | undefined {
  return value === undefined || value === null ? undefined : text(field, value);
}

function flag(field: string, value: Json): boolean {
  if (typeof value !== 'boolean') throw invalidPayload(`${field} must be a boolean`);
  return value;
}

function object(field: string, value: Json): JsonObject {
  if (!isJsonObject(value)) throw invalidPayload(`${field} must be an object`);
  return value;
}
