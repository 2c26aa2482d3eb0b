import { invalidPayload } from '../shared/errors.ts';
import { fromJson, isJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { Page } from '../shared/pagination.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { changedDefinition } from './package-store.ts';
import type { ListPackagesQuery, PackageRow, PackageStore } from './package-store.ts';
import { definitionPart, map, packageRecord, text } from './records.ts';
import { PLUGIN_MAPS, PLUGIN_NESTED_MAPS } from './schemas.ts';
import type { CreatePluginBody, Plugin, PluginPlatform, UpdatePluginBody } from './schemas.ts';

/** What a dependency names: its id, or its name and version (`latest`, a range). */
export interface DependencyRef {
  id?: string;
  name?: string;
  version?: string;
}
export interface ResolvedRef {
  id: string;
  name: string;
  version: string;
}

/** Finds an integration or interface a workspace may depend on: its own, a published one, a built-in. */
export type DependencyLookup = (workspaceId: string, ref: DependencyRef) => Promise<ResolvedRef | undefined>;

const SHAPE = { maps: PLUGIN_MAPS, nested: PLUGIN_NESTED_MAPS };
const KINDS = ['interfaces', 'integrations'] as const;

const tagsPart = (value: JsonObject[string] | undefined) => ({
  tags: isJsonObject(value) ? map(value.tags) : {},
});

const resolved = (value: JsonObject[string] | undefined): Record<string, ResolvedRef> =>
  Object.fromEntries(
    Object.entries(map(value)).map(([alias, ref]) => [
      alias,
      { id: text(ref.id), name: text(ref.name), version: text(ref.version) },
    ]),
  );

function toPlugin(row: PackageRow): Plugin {
  const definition = fromJson<JsonObject>(row.definition);
  const dependencies = isJsonObject(definition.dependencies) ? definition.dependencies : {};
  return {
    ...packageRecord(row, definition),
    configuration: isJsonObject(definition.configuration) ? definition.configuration : { schema: {} },
    states: map(definition.states),
    events: map(definition.events),
    actions: map(definition.actions),
    user: tagsPart(definition.user),
    conversation: tagsPart(definition.conversation),
    message: tagsPart(definition.message),
    dependencies: {
      interfaces: resolved(dependencies.interfaces),
      integrations: resolved(dependencies.integrations),
    },
    visibility: row.visibility,
    lifecycleStatus: 'published',
  };
}

/**
 * The plugins workspaces deploy (`bp deploy` of a plugin project): the definition and both bundles as
 * CLI 7 sends them, and the interfaces and integrations it depends on, each resolved to what the
 * workspace may use. Kept per workspace, published by the server's operator. Bots install them by
 * alias (`updateBot`'s `plugins`); their code is bundled into the bot's.
 */
export class Plugins {
  constructor(
    readonly store: PackageStore,
    private readonly lookups: Record<(typeof KINDS)[number], DependencyLookup>,
  ) {}

  /** The definition's dependencies, each as its id, name and version; 400 naming one that is not found. */
  private async withDependencies(actor: WorkspaceActor, definition: JsonObject): Promise<JsonObject> {
    const dependencies = definition.dependencies;
    if (!isJsonObject(dependencies)) return definition;
    const next: JsonObject = {};
    for (const kind of KINDS) {
      const entries: JsonObject = {};
      for (const [alias, ref] of Object.entries(map(dependencies[kind]))) {
        const wanted = { id: ref.id, name: ref.name, version: ref.version };
        const asked: DependencyRef = Object.fromEntries(
          Object.entries(wanted).filter((e): e is [string, string] => typeof e[1] === 'string'),
        );
        const found = await this.lookups[kind](actor.workspaceId, asked);
        if (!found) {
          const what = asked.id ?? `${asked.name ?? '?'}@${asked.version ?? '?'}`;
          throw invalidPayload(
            `dependencies.${kind}.${alias}: no ${kind.slice(0, -1)} ${what} in the workspace or the hub`,
          );
        }
        entries[alias] = { id: found.id, name: found.name, version: found.version };
      }
      next[kind] = entries;
    }
    return { ...definition, dependencies: next };
  }

  async create(actor: WorkspaceActor, body: CreatePluginBody): Promise<Plugin> {
    const definition = await this.withDependencies(actor, definitionPart(body));
    return toPlugin(await this.store.create(actor, body, definition, { ...body.code }, body));
  }

  async update(actor: WorkspaceActor, id: string, body: UpdatePluginBody): Promise<Plugin> {
    // Only the dependencies sent are resolved: those kept were resolved when they were sent.
    const changes = await this.withDependencies(actor, definitionPart(body));
    const row = await this.store.update(
      actor,
      id,
      (definition, code) => ({
        definition: changedDefinition(definition, changes, SHAPE),
        code: { ...code, ...body.code },
      }),
      body,
    );
    return toPlugin(row);
  }

  get = async (actor: WorkspaceActor, id: string) => toPlugin(await this.store.get(actor, id));
  getByName = async (actor: WorkspaceActor, name: string, version: string) =>
    toPlugin(await this.store.getByName(actor, name, version));
  delete = (actor: WorkspaceActor, id: string) => this.store.delete(actor, id);
  getPublic = async (id: string) => toPlugin(await this.store.published(id));
  getPublicByName = async (name: string, version: string) =>
    toPlugin(await this.store.publishedByName(name, version));

  /** A bundle of one of the workspace's plugins, or of a published one (`bp add` installs it). */
  async code(row: Promise<PackageRow>, platform: PluginPlatform): Promise<string> {
    const { code } = await row;
    const bundles = code === null ? {} : fromJson<JsonObject>(code);
    return text(bundles[platform]);
  }

  async list(actor: WorkspaceActor, query: ListPackagesQuery): Promise<Page<Plugin>> {
    const page = await this.store.list(actor, query);
    return { ...page, items: page.items.map(toPlugin) };
  }

  async listPublic(query: ListPackagesQuery): Promise<Page<Plugin>> {
    const page = await this.store.listPublished(query);
    return { ...page, items: page.items.map(toPlugin) };
  }
}
