import { alreadyExists, notFound } from '../shared/errors.ts';
import { fromJson, isJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { Page } from '../shared/pagination.ts';
import { resolveVersion } from '../shared/versions.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { BUILT_IN_INTERFACES, isBuiltInInterfaceName } from './built-in-interfaces.ts';
import { definitionPart, map, packageRecord } from './records.ts';
import { changedDefinition } from './package-store.ts';
import type { ListPackagesQuery, PackageRow, PackageStore } from './package-store.ts';
import type { DependencyRef, ResolvedRef } from './plugins.ts';
import { INTERFACE_MAPS } from './schemas.ts';
import type { CreateInterfaceBody, Interface, UpdateInterfaceBody } from './schemas.ts';

const SHAPE = { maps: INTERFACE_MAPS, nested: {} };

function toInterface(row: PackageRow): Interface {
  const definition = fromJson<JsonObject>(row.definition);
  const nameTemplate = definition.nameTemplate;
  return {
    ...packageRecord(row, definition),
    entities: map(definition.entities),
    events: map(definition.events),
    actions: map(definition.actions),
    channels: map(definition.channels),
    ...(isJsonObject(nameTemplate) && { nameTemplate }),
  };
}

const builtInById = (id: string) => BUILT_IN_INTERFACES.find((b) => b.id === id);
const builtInsNamed = (name: string) => BUILT_IN_INTERFACES.filter((b) => b.name === name);
const refOf = ({ id, name, version }: ResolvedRef): ResolvedRef => ({ id, name, version });

/**
 * The interfaces workspaces deploy (`bp deploy` of an interface project): what integrations declare
 * they implement, and plugins depend on. Kept per workspace, published by the server's operator. Beside
 * them, every lookup finds the built-ins (`built-in-interfaces.ts`), which no workspace deploys.
 */
export class Interfaces {
  constructor(readonly store: PackageStore) {}

  /** A built-in's name is taken: its lookups would answer two interfaces of one name and version. */
  async create(actor: WorkspaceActor, body: CreateInterfaceBody): Promise<Interface> {
    if (isBuiltInInterfaceName(body.name))
      throw alreadyExists(
        `name: ${body.name} is one of Parley's built-in interfaces; deploy it under another name`,
      );
    return toInterface(await this.store.create(actor, body, definitionPart(body), null, body));
  }

  async update(actor: WorkspaceActor, id: string, body: UpdateInterfaceBody): Promise<Interface> {
    const row = await this.store.update(
      actor,
      id,
      (definition) => ({
        definition: changedDefinition(definition, definitionPart(body), SHAPE),
        code: null,
      }),
      body,
    );
    return toInterface(row);
  }

  /** One of the workspace's own, or a built-in. */
  get = async (actor: WorkspaceActor, id: string) =>
    builtInById(id) ?? toInterface(await this.store.get(actor, id));

  /** One of the workspace's own by name, else a built-in: at the version, or `latest` or a range. */
  async getByName(actor: WorkspaceActor, name: string, version: string): Promise<Interface> {
    const row = await this.store.findByName(actor, name, version);
    const found = row ? toInterface(row) : resolveVersion(builtInsNamed(name), version);
    if (!found) throw notFound('Interface', `${name}@${version}`);
    return found;
  }

  delete = (actor: WorkspaceActor, id: string) => this.store.delete(actor, id);

  /** The hub: a built-in or a published one, by id. */
  getPublic = async (id: string) => builtInById(id) ?? toInterface(await this.store.published(id));

  /** The hub: by name, at a version, `latest` or a range, among the built-ins and the published ones. */
  async getPublicByName(name: string, version: string): Promise<Interface> {
    const rows = await this.store.publishedNamed(name);
    const found = resolveVersion([...builtInsNamed(name), ...rows.map(toInterface)], version);
    if (!found) throw notFound('Interface', `${name}@${version}`);
    return found;
  }

  async list(actor: WorkspaceActor, query: ListPackagesQuery): Promise<Page<Interface>> {
    const page = await this.store.list(actor, query);
    return { ...page, items: page.items.map(toInterface) };
  }

  /** The hub's listing: the built-ins first (on the first page), then the published ones, newest first. */
  async listPublic(query: ListPackagesQuery): Promise<Page<Interface>> {
    const page = await this.store.listPublished(query);
    const builtIns =
      query.nextToken === undefined
        ? BUILT_IN_INTERFACES.filter(
            (b) =>
              (query.name === undefined || b.name === query.name) &&
              (query.version === undefined || b.version === query.version),
          )
        : [];
    return { ...page, items: [...builtIns, ...page.items.map(toInterface)] };
  }

  /** One an integration may implement or a plugin depend on: the workspace's own, a published one, a built-in. */
  async visibleTo(workspaceId: string, ref: DependencyRef): Promise<ResolvedRef | undefined> {
    const row = await this.store.visibleTo(workspaceId, ref);
    if (row) return refOf(row);
    const { id, name, version } = ref;
    const builtIn =
      id !== undefined
        ? builtInById(id)
        : name !== undefined && version !== undefined
          ? resolveVersion(builtInsNamed(name), version)
          : undefined;
    return builtIn && refOf(builtIn);
  }
}
