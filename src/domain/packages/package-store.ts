import type { Db } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { PackageKind, Visibility } from '../../value-sets.ts';
import type { Publishing } from '../integrations/publishing.ts';
import { alreadyExists, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, isJsonObject, mergeMap, toJson } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { nowIso } from '../shared/time.ts';
import { resolveVersion } from '../shared/versions.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';

export type PackageRow = Row<'packages'>;

export interface ListPackagesQuery extends PageRequest {
  name?: string;
  version?: string;
}

/** What a create or update asks of who finds it. */
interface VisibilityFields {
  public?: boolean;
  visibility?: Visibility;
}

/** Listings serve the newest first. */
const keyset = new Keyset('created_at', 'desc');

/** How one kind's definition changes: its maps (null removes an entry) and its maps one level down. */
export interface DefinitionShape {
  maps: readonly string[];
  nested: Readonly<Record<string, readonly string[]>>;
}

/**
 * A definition with a change applied: the maps merged entry by entry (null removes one), the nested
 * maps likewise, any other part replaced (null removes it).
 */
export function changedDefinition(
  current: JsonObject,
  changes: JsonObject,
  shape: DefinitionShape,
): JsonObject {
  const next: JsonObject = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    const parts = shape.nested[key];
    const before = next[key];
    if (value === null) delete next[key];
    else if (shape.maps.includes(key) && isJsonObject(value))
      next[key] = mergeMap(isJsonObject(before) ? before : {}, value);
    else if (parts && isJsonObject(value)) {
      const merged: JsonObject = isJsonObject(before) ? { ...before } : {};
      for (const part of parts) {
        const inner = merged[part];
        const change = value[part];
        if (isJsonObject(change)) merged[part] = mergeMap(isJsonObject(inner) ? inner : {}, change);
      }
      next[key] = merged;
    } else next[key] = value;
  }
  return next;
}

/**
 * The rows of one kind of package (interfaces, or plugins) that workspaces deploy: a workspace's own,
 * found by id or by name and version, and those the server's operator published, which the hub's
 * lookups find for every workspace. The kind's service reads its rows as records.
 */
export class PackageStore {
  constructor(
    private readonly db: Db,
    private readonly kind: PackageKind,
    /** Its name in errors: `Interface`, `Plugin`. */
    private readonly label: string,
    private readonly publishing: Publishing,
  ) {}

  async create(
    actor: WorkspaceActor,
    ref: { name: string; version: string },
    definition: JsonObject,
    code: JsonObject | null,
    asked: VisibilityFields,
  ): Promise<PackageRow> {
    requireRole(actor.role, 'bots.write');
    const now = nowIso();
    const row: PackageRow = {
      id: newId(this.kind),
      workspace_id: actor.workspaceId,
      kind: this.kind,
      name: ref.name,
      version: ref.version,
      definition: toJson(definition),
      code: code && toJson(code),
      visibility: await this.publishing.next(actor, 'private', asked),
      created_at: now,
      updated_at: now,
    };
    if (await this.findOwn(actor.workspaceId, ref.name, ref.version))
      throw alreadyExists(`name: ${this.kind} ${ref.name} v${ref.version} exists; update it`);
    await this.write(row, () => this.db.insertInto('packages').values(row).execute());
    return row;
  }

  async update(
    actor: WorkspaceActor,
    id: string,
    change: (
      definition: JsonObject,
      code: JsonObject | null,
    ) => { definition: JsonObject; code: JsonObject | null },
    asked: VisibilityFields,
  ): Promise<PackageRow> {
    requireRole(actor.role, 'bots.write');
    const current = await this.get(actor, id);
    const next = change(
      fromJson<JsonObject>(current.definition),
      current.code === null ? null : fromJson<JsonObject>(current.code),
    );
    const row: PackageRow = {
      ...current,
      definition: toJson(next.definition),
      code: next.code && toJson(next.code),
      visibility: await this.publishing.next(actor, current.visibility, asked),
      updated_at: nowIso(),
    };
    await this.write(row, () => this.db.updateTable('packages').set(row).where('id', '=', id).execute());
    return row;
  }

  /** A name and version another workspace published is the hub's already. */
  private async write(row: PackageRow, statement: () => Promise<unknown>): Promise<void> {
    try {
      await statement();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw alreadyExists(`visibility: a ${this.kind} ${row.name} v${row.version} is published already`);
    }
  }

  /** One of the workspace's own (another workspace's does not exist for this actor). */
  async get(actor: WorkspaceActor, id: string): Promise<PackageRow> {
    const row = await this.of()
      .where('id', '=', id)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!row) throw notFound(this.label, id);
    return row;
  }

  /** One of the workspace's own by name, at a version, `latest` or a range (the highest it accepts). */
  async getByName(actor: WorkspaceActor, name: string, version: string): Promise<PackageRow> {
    const row = await this.findByName(actor, name, version);
    if (!row) throw notFound(this.label, `${name}@${version}`);
    return row;
  }

  /** As `getByName`, undefined when the workspace has none. */
  async findByName(actor: WorkspaceActor, name: string, version: string): Promise<PackageRow | undefined> {
    return resolveVersion(
      await this.of().where('workspace_id', '=', actor.workspaceId).where('name', '=', name).execute(),
      version,
    );
  }

  async list(actor: WorkspaceActor, query: ListPackagesQuery): Promise<Page<PackageRow>> {
    return this.page(this.of().where('workspace_id', '=', actor.workspaceId), query);
  }

  async delete(actor: WorkspaceActor, id: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await this.get(actor, id);
    await this.db.deleteFrom('packages').where('id', '=', id).execute();
  }

  /** A published one by id, for any workspace (the hub). */
  async published(id: string): Promise<PackageRow> {
    const row = await this.of().where('id', '=', id).where('visibility', '<>', 'private').executeTakeFirst();
    if (!row) throw notFound(this.label, id);
    return row;
  }

  /** A published one by name, at a version, `latest` or a range. */
  async publishedByName(name: string, version: string): Promise<PackageRow> {
    const row = resolveVersion(await this.publishedNamed(name), version);
    if (!row) throw notFound(this.label, `${name}@${version}`);
    return row;
  }

  /** The published ones of a name, at every version. */
  publishedNamed(name: string): Promise<PackageRow[]> {
    return this.of().where('name', '=', name).where('visibility', '<>', 'private').execute();
  }

  /** The hub's listing: the published ones that are listed (`public`, not `unlisted`). */
  async listPublished(query: ListPackagesQuery): Promise<Page<PackageRow>> {
    return this.page(this.of().where('visibility', '=', 'public'), query);
  }

  /** One the workspace may depend on: its own or a published one; by id, or by name and version. */
  async visibleTo(
    workspaceId: string,
    ref: { id?: string; name?: string; version?: string },
  ): Promise<PackageRow | undefined> {
    let select = this.of().where((eb) =>
      eb.or([eb('workspace_id', '=', workspaceId), eb('visibility', '<>', 'private')]),
    );
    if (ref.id !== undefined) return select.where('id', '=', ref.id).executeTakeFirst();
    if (ref.name === undefined || ref.version === undefined) return undefined;
    select = select.where('name', '=', ref.name);
    const rows = await select.execute();
    // The workspace's own first, as the CLI looks in the workspace before the hub.
    return (
      resolveVersion(
        rows.filter((r) => r.workspace_id === workspaceId),
        ref.version,
      ) ?? resolveVersion(rows, ref.version)
    );
  }

  private of() {
    return this.db.selectFrom('packages').selectAll().where('kind', '=', this.kind);
  }

  private findOwn(workspaceId: string, name: string, version: string) {
    return this.of()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .where('version', '=', version)
      .executeTakeFirst();
  }

  private async page(
    select: ReturnType<PackageStore['of']>,
    query: ListPackagesQuery,
  ): Promise<Page<PackageRow>> {
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    if (query.name !== undefined) select = select.where('name', '=', query.name);
    if (query.version !== undefined) select = select.where('version', '=', query.version);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('created_at', keyset.direction)
      .orderBy('id', keyset.direction)
      .limit(pageSize + 1)
      .execute();
    return keyset.page(rows, pageSize, (r) => [r.created_at, r.id]);
  }
}
