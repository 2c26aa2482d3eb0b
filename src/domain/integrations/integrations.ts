import type { Db } from '../../store/index.ts';
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

/**
 * The integrations a workspace deployed (`bp deploy` of an integration project): each a name and a
 * version, its definition and the bundle that runs it. Parley has no hub of public integrations: an
 * integration is the workspace's own.
 */
export class Integrations {
  constructor(
    private readonly db: Db,
    private readonly sdkRuntime: SdkRuntimeSlot,
  ) {}

  /** Only a bundle built by `bp build` runs as an integration (a Parley bot package is no integration). */
  private checkCode(code: string | undefined): void {
    if (code === undefined || code.trim() === '') return;
    if (this.sdkRuntime.runtimeOf(code) !== SDK_RUNTIME)
      throw invalidPayload('code: an integration runs a CommonJS bundle built by `bp build`');
  }

  async create(actor: WorkspaceActor, body: CreateIntegrationBody): Promise<Integration> {
    requireRole(actor.role, 'bots.write');
    this.checkCode(body.code);
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
      created_at: now,
      updated_at: now,
    };
    const existing = await this.find(actor.workspaceId, body.name, body.version);
    if (existing) throw alreadyExists(`name: integration ${body.name} v${body.version} exists; update it`);
    await this.db.insertInto('integrations').values(row).execute();
    return toIntegration(row);
  }

  async update(actor: WorkspaceActor, id: string, body: UpdateIntegrationBody): Promise<Integration> {
    requireRole(actor.role, 'bots.write');
    this.checkCode(body.code);
    const current = await this.requireRow(actor, id);
    const row: Row<'integrations'> = {
      ...current,
      definition: JSON.stringify(definitionOf(fromJson<Definition>(current.definition), body)),
      code: body.code ?? current.code,
      secrets: JSON.stringify(mergeMap(fromJson<Record<string, string>>(current.secrets), body.secrets)),
      updated_at: nowIso(),
    };
    await this.db.updateTable('integrations').set(row).where('id', '=', id).execute();
    return toIntegration(row);
  }

  async get(actor: WorkspaceActor, id: string): Promise<Integration> {
    return toIntegration(await this.requireRow(actor, id));
  }

  async getByName(actor: WorkspaceActor, name: string, version: string): Promise<Integration> {
    const row = await this.find(actor.workspaceId, name, version);
    if (!row) throw notFound('Integration', `${name}@${version}`);
    return toIntegration(row);
  }

  async list(actor: WorkspaceActor, query: ListIntegrationsQuery): Promise<Page<Integration>> {
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    let select = this.db.selectFrom('integrations').selectAll().where('workspace_id', '=', actor.workspaceId);
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
      .select('bot_id')
      .where('integration_id', '=', id)
      .executeTakeFirst();
    if (installed) {
      throw new ApiError(
        'InvalidPayload',
        `id: the integration is installed on bot ${installed.bot_id}; uninstall it first`,
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
    const row = await this.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!row) throw notFound('Integration', id);
    return row;
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
    public: false,
    visibility: 'private',
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
