import { fromJson, isJsonObject } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { Page } from '../shared/pagination.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { definitionPart, map, packageRecord } from './records.ts';
import { changedDefinition } from './package-store.ts';
import type { ListPackagesQuery, PackageRow, PackageStore } from './package-store.ts';
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

/**
 * The interfaces workspaces deploy (`bp deploy` of an interface project): what integrations declare
 * they implement, and plugins depend on. Kept per workspace, published by the server's operator.
 */
export class Interfaces {
  constructor(readonly store: PackageStore) {}

  async create(actor: WorkspaceActor, body: CreateInterfaceBody): Promise<Interface> {
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

  get = async (actor: WorkspaceActor, id: string) => toInterface(await this.store.get(actor, id));
  getByName = async (actor: WorkspaceActor, name: string, version: string) =>
    toInterface(await this.store.getByName(actor, name, version));
  delete = (actor: WorkspaceActor, id: string) => this.store.delete(actor, id);
  getPublic = async (id: string) => toInterface(await this.store.published(id));
  getPublicByName = async (name: string, version: string) =>
    toInterface(await this.store.publishedByName(name, version));

  async list(actor: WorkspaceActor, query: ListPackagesQuery): Promise<Page<Interface>> {
    const page = await this.store.list(actor, query);
    return { ...page, items: page.items.map(toInterface) };
  }

  async listPublic(query: ListPackagesQuery): Promise<Page<Interface>> {
    const page = await this.store.listPublished(query);
    return { ...page, items: page.items.map(toInterface) };
  }
}
