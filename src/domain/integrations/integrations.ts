import type { Db } from '../../store/index.ts';
import { isUniqueViolation } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { SDK_RUNTIME } from '../bots/bot-code.ts';
import type { SdkRuntimeSlot } from '../bots/bot-code.ts';
import { alreadyExists, ApiError, invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, isJsonObject, mergeMap } from '../shared/json.ts';
import type { Json } from '../shared/json.ts';
import type { JsonObject } from '../shared/schemas.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { nowIso } from '../shared/time.ts';
import { newSigningSecret } from '../webhooks/signatures.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';
import type { DependencyLookup, DependencyRef, ResolvedRef } from '../packages/plugins.ts';
import { resolveVersion } from '../shared/versions.ts';
import { builtInIntegrations, isBuiltInName } from './built-ins.ts';
import { isPublished } from './publishing.ts';
import type { Publishing } from './publishing.ts';
import { DEFINITION_MAPS } from './schemas.ts';
import type { DefinitionMap, UpdateIntegrationBody, CreateIntegrationBody, Integration } from './schemas.ts';

/** What is kept of a definition (the row's `definition`). */
interface Definition extends Record<DefinitionMap, Record<string, JsonObject>> {
  title: string;
  description: string;
  icon?: string;
  readme?: string;
  configuration: JsonObject;
  identifier: JsonObject;
  user: JsonObject;
  sdkVersion?: string;
}

/** An integration as its runtime needs it: the bundle, its secrets' values and what it declares. */
export interface RuntimeIntegration {
  id: string;
  name: string;
  version: string;
  code: string;
  secrets: Record<string, string>;
  signingSecret: string;
  updatedAt: string;
  actions: Record<string, JsonObject>;
  channels: Record<string, JsonObject>;
}

export interface ListIntegrationsQuery extends PageRequest {
  name?: string;
  version?: string;
}

/** Listings serve the newest first. */
const keyset = new Keyset('created_at', 'desc');

/** What a lookup answers, or undefined when it found nothing. */
async function ifFound<T>(lookup: Promise<T>): Promise<T | undefined> {
  try {
    return await lookup;
  } catch (err) {
    if (err instanceof ApiError && err.type === 'ResourceNotFound') return undefined;
    throw err;
  }
}

/** Whether a listing's filters keep an integration. */
const listed = (query: ListIntegrationsQuery) => (i: { name: string; version: string }) =>
  (query.name === undefined || i.name === query.name) &&
  (query.version === undefined || i.version === query.version);

/**
 * The integrations a workspace deployed (`bp deploy` of an integration project): each a name and a
 * version, its definition and the bundle that runs it. An integration is the workspace's own until the
 * server's operator publishes it: then every workspace finds it through the hub's lookups, beside
 * Parley's built-ins (`built-ins.ts`), which every lookup finds.
 */
export class Integrations {
  constructor(
    private readonly db: Db,
    private readonly sdkRuntime: SdkRuntimeSlot,
    private readonly publishing: Publishing,
    /** Finds the interfaces an integration may declare it implements. */
    private readonly interfacesVisibleTo: DependencyLookup,
  ) {}

  /**
   * The interfaces a definition says it implements, each found (the workspace's, published, built-in) and
   * kept with its name and version; 400 naming the entry whose interface is not found.
   */
  private async withInterfaces<T extends { interfaces?: Record<string, JsonObject | null> }>(
    workspaceId: string,
    body: T,
  ): Promise<T> {
    if (!body.interfaces) return body;
    const interfaces: Record<string, JsonObject | null> = {};
    for (const [key, entry] of Object.entries(body.interfaces)) {
      if (entry === null) {
        interfaces[key] = null;
        continue;
      }
      const ref: DependencyRef = {};
      for (const part of ['id', 'name', 'version'] as const) {
        const value = entry[part];
        if (typeof value === 'string' && value !== '') ref[part] = value;
      }
      const found = await this.interfacesVisibleTo(workspaceId, ref);
      if (!found) {
        const what = ref.id ?? `${ref.name ?? '?'}@${ref.version ?? '?'}`;
        throw invalidPayload(`interfaces.${key}.id: no interface ${what} in the workspace or the hub`);
      }
      interfaces[key] = { ...entry, id: found.id, name: found.name, version: found.version };
    }
    return { ...body, interfaces };
  }

  /** A published integration may not take a built-in's name, nor another workspace's published one. */
  private async write(row: Row<'integrations'>, statement: () => Promise<unknown>): Promise<void> {
    if (isPublished(row.visibility) && isBuiltInName(row.name))
      throw alreadyExists(
        `name: ${row.name} is one of Parley's built-in integrations; publish it under another name`,
      );
    try {
      await statement();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw alreadyExists(`visibility: an integration ${row.name} v${row.version} is published already`);
    }
  }

  /** Only a bundle built by `bp build` runs as an integration (a Parley bot package is no integration). */
  private checkCode(code: string | undefined): void {
    if (code === undefined || code.trim() === '') return;
    if (this.sdkRuntime.runtimeOf(code) !== SDK_RUNTIME)
      throw invalidPayload('code: an integration runs a CommonJS bundle built by `bp build`');
  }

  async create(actor: WorkspaceActor, asked: CreateIntegrationBody): Promise<Integration> {
    requireRole(actor.role, 'bots.write');
    this.checkCode(asked.code);
    const body = await this.withInterfaces(actor.workspaceId, asked);
    const now = nowIso();
    const row: Row<'integrations'> = {
      id: newId('integration'),
      workspace_id: actor.workspaceId,
      name: body.name,
      version: body.version,
      definition: JSON.stringify(definitionOf(emptyDefinition(), body)),
      code: body.code ?? null,
      secrets: JSON.stringify(mergeMap({}, body.secrets)),
      signing_secret: newSigningSecret(),
      visibility: await this.publishing.next(actor, 'private', body),
      created_at: now,
      updated_at: now,
    };
    const existing = await this.find(actor.workspaceId, body.name, body.version);
    if (existing) throw alreadyExists(`name: integration ${body.name} v${body.version} exists; update it`);
    await this.write(row, () => this.db.insertInto('integrations').values(row).execute());
    return toIntegration(row);
  }

  async update(actor: WorkspaceActor, id: string, asked: UpdateIntegrationBody): Promise<Integration> {
    requireRole(actor.role, 'bots.write');
    this.checkCode(asked.code);
    const current = await this.requireRow(actor, id);
    const body = await this.withInterfaces(actor.workspaceId, asked);
    const row: Row<'integrations'> = {
      ...current,
      definition: JSON.stringify(definitionOf(fromJson<Definition>(current.definition), body)),
      code: body.code ?? current.code,
      secrets: JSON.stringify(mergeMap(fromJson<Record<string, string>>(current.secrets), body.secrets)),
      visibility: await this.publishing.next(actor, current.visibility, body),
      updated_at: nowIso(),
    };
    await this.write(row, () => this.db.updateTable('integrations').set(row).where('id', '=', id).execute());
    return toIntegration(row);
  }

  /** One of the workspace's own, or a built-in (the CLI looks up every integration of a bot so). */
  async get(actor: { workspaceId: string }, id: string): Promise<Integration> {
    const row = await this.ownRow(actor.workspaceId, id);
    const found = row ? toIntegration(row) : builtInIntegrations().find((b) => b.id === id);
    if (!found) throw notFound('Integration', id);
    return found;
  }

  /**
   * One of the workspace's own by name, else a built-in: at the version given, or `latest` or a range,
   * the highest version it accepts (semver's order).
   */
  async getByName(actor: { workspaceId: string }, name: string, version: string): Promise<Integration> {
    const own = await this.db
      .selectFrom('integrations')
      .selectAll()
      .where('workspace_id', '=', actor.workspaceId)
      .where('name', '=', name)
      .execute();
    const row = resolveVersion(own, version);
    const found = row
      ? toIntegration(row)
      : resolveVersion(
          builtInIntegrations().filter((b) => b.name === name),
          version,
        );
    if (!found) throw notFound('Integration', `${name}@${version}`);
    return found;
  }

  /** The hub: a built-in or a published integration, by id. */
  async getPublic(id: string): Promise<Integration> {
    const row = await this.published().where('id', '=', id).executeTakeFirst();
    const found = row ? toIntegration(row) : builtInIntegrations().find((b) => b.id === id);
    if (!found) throw notFound('Integration', id);
    return found;
  }

  /** The hub: by name, at a version, `latest` or a range, among the built-ins and the published ones. */
  async getPublicByName(name: string, version: string): Promise<Integration> {
    const rows = await this.published().where('name', '=', name).execute();
    const candidates = [...builtInIntegrations().filter((b) => b.name === name), ...rows.map(toIntegration)];
    const found = resolveVersion(candidates, version);
    if (!found) throw notFound('Integration', `${name}@${version}`);
    return found;
  }

  /** The hub's listing: the built-ins first (on the first page), then the published ones, newest first. */
  async listPublic(query: ListIntegrationsQuery): Promise<Page<Integration>> {
    const page = await this.page(this.published().where('visibility', '=', 'public'), query);
    const builtIns = query.nextToken === undefined ? builtInIntegrations().filter(listed(query)) : [];
    return { ...page, items: [...builtIns, ...page.items] };
  }

  /** An integration a plugin of the workspace may depend on: its own, a built-in, a published one. */
  async visibleTo(workspaceId: string, ref: DependencyRef): Promise<ResolvedRef | undefined> {
    const scope = { workspaceId };
    const { id, name, version } = ref;
    const found =
      id !== undefined
        ? ((await ifFound(this.get(scope, id))) ?? (await ifFound(this.getPublic(id))))
        : name !== undefined && version !== undefined
          ? ((await ifFound(this.getByName(scope, name, version))) ??
            (await ifFound(this.getPublicByName(name, version))))
          : undefined;
    return found && { id: found.id, name: found.name, version: found.version };
  }

  async list(actor: WorkspaceActor, query: ListIntegrationsQuery): Promise<Page<Integration>> {
    return this.page(
      this.db.selectFrom('integrations').selectAll().where('workspace_id', '=', actor.workspaceId),
      query,
    );
  }

  private published() {
    return this.db.selectFrom('integrations').selectAll().where('visibility', '<>', 'private');
  }

  private async page(
    from: ReturnType<Integrations['published']>,
    query: ListIntegrationsQuery,
  ): Promise<Page<Integration>> {
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    let select = from;
    if (query.name !== undefined) select = select.where('name', '=', query.name);
    if (query.version !== undefined) select = select.where('version', '=', query.version);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('created_at', keyset.direction)
      .orderBy('id', keyset.direction)
      .limit(pageSize + 1)
      .execute();
    const page = keyset.page(rows, pageSize, (r) => [r.created_at, r.id]);
    return { ...page, items: page.items.map(toIntegration) };
  }

  /** An integration installed on a bot stays until it is uninstalled. */
  async delete(actor: WorkspaceActor, id: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await this.requireRow(actor, id);
    const installed = await this.db
      .selectFrom('bot_installations')
      .innerJoin('bots', 'bots.id', 'bot_installations.bot_id')
      .select(['bot_installations.bot_id', 'bots.workspace_id'])
      .where('bot_installations.integration_id', '=', id)
      .executeTakeFirst();
    if (installed) {
      // A published integration may be installed in other workspaces: their bots are not named.
      const where =
        installed.workspace_id === actor.workspaceId
          ? `bot ${installed.bot_id}`
          : 'a bot of another workspace';
      throw new ApiError(
        'InvalidPayload',
        `id: the integration is installed on ${where}; uninstall it first`,
      );
    }
    await this.db.deleteFrom('integrations').where('id', '=', id).execute();
  }

  /** A new secret for the requests handed to the integration: the old one stops holding at once. */
  async rotateSigningSecret(actor: WorkspaceActor, id: string): Promise<string> {
    requireRole(actor.role, 'bots.write');
    await this.requireRow(actor, id);
    const secret = newSigningSecret();
    await this.db
      .updateTable('integrations')
      .set({ signing_secret: secret, updated_at: nowIso() })
      .where('id', '=', id)
      .execute();
    return secret;
  }

  /** When the integration last changed (cheap, for caches); undefined once it is deleted. */
  async updatedAt(id: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('integrations')
      .select('updated_at')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.updated_at;
  }

  /** What the integration declares (channels, user...), without its code. */
  async definitionOf(id: string): Promise<Record<string, Json> | undefined> {
    const row = await this.db
      .selectFrom('integrations')
      .select('definition')
      .where('id', '=', id)
      .executeTakeFirst();
    return row && fromJson<Record<string, Json>>(row.definition);
  }

  /** What runs the integration (no actor: what asks knows it is installed); undefined without code. */
  async forRuntime(id: string): Promise<RuntimeIntegration | undefined> {
    const row = await this.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || row.code === null) return undefined;
    const definition = fromJson<Definition>(row.definition);
    return {
      id: row.id,
      name: row.name,
      version: row.version,
      code: row.code,
      secrets: fromJson<Record<string, string>>(row.secrets),
      signingSecret: row.signing_secret,
      updatedAt: row.updated_at,
      actions: definition.actions,
      channels: definition.channels,
    };
  }

  private find(workspaceId: string, name: string, version: string) {
    return this.db
      .selectFrom('integrations')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('name', '=', name)
      .where('version', '=', version)
      .executeTakeFirst();
  }

  /** An integration of another workspace does not exist for this actor. */
  private async requireRow(actor: WorkspaceActor, id: string): Promise<Row<'integrations'>> {
    const row = await this.ownRow(actor.workspaceId, id);
    if (!row) throw notFound('Integration', id);
    return row;
  }

  private ownRow(workspaceId: string, id: string): Promise<Row<'integrations'> | undefined> {
    return this.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
  }
}

function emptyDefinition(): Definition {
  return {
    title: '',
    description: '',
    configuration: {},
    identifier: {},
    user: {},
    channels: {},
    states: {},
    events: {},
    actions: {},
    entities: {},
    interfaces: {},
    configurations: {},
  };
}

function definitionOf(current: Definition, body: UpdateIntegrationBody): Definition {
  const next: Definition = { ...current };
  for (const key of DEFINITION_MAPS) next[key] = mergeMap(current[key], body[key]);
  if (body.title !== undefined) next.title = body.title;
  if (body.description !== undefined) next.description = body.description;
  if (body.icon !== undefined) next.icon = body.icon;
  if (body.readme !== undefined) next.readme = body.readme;
  if (body.configuration !== undefined) next.configuration = body.configuration;
  if (body.identifier !== undefined) next.identifier = body.identifier;
  if (body.user !== undefined) next.user = body.user;
  if (body.sdkVersion !== undefined) next.sdkVersion = body.sdkVersion;
  return next;
}

/** A part of a definition with its `tags` (empty when none were declared), as clients read them. */
function withTags(part: Json | undefined): JsonObject {
  const object = isJsonObject(part) ? part : {};
  return { ...object, tags: isJsonObject(object.tags) ? object.tags : {} };
}

/** A channel as the hosted API answers it: its conversation's and messages' tags always there. */
function channelOf(channel: JsonObject): JsonObject {
  return {
    ...channel,
    messages: isJsonObject(channel.messages) ? channel.messages : {},
    conversation: withTags(channel.conversation),
    message: withTags(channel.message),
  };
}

function toIntegration(row: Row<'integrations'>): Integration {
  const definition = fromJson<Definition>(row.definition);
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    name: row.name,
    version: row.version,
    title: definition.title,
    description: definition.description,
    iconUrl: '',
    readmeUrl: '',
    public: isPublished(row.visibility),
    visibility: row.visibility,
    verificationStatus: 'unapproved',
    dev: false,
    url: null,
    ...(definition.sdkVersion !== undefined && { sdkVersion: definition.sdkVersion }),
    configuration: definition.configuration,
    identifier: definition.identifier,
    user: withTags(definition.user),
    channels: Object.fromEntries(
      Object.entries(definition.channels).map(([name, channel]) => [name, channelOf(channel)]),
    ),
    states: definition.states,
    events: definition.events,
    actions: definition.actions,
    entities: definition.entities,
    interfaces: definition.interfaces,
    configurations: definition.configurations,
    secrets: Object.keys(fromJson<Record<string, string>>(row.secrets)),
    hasCode: row.code !== null,
  };
}
