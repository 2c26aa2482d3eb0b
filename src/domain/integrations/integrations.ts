import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Db } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { runtimeOf, SDK_RUNTIME } from '../bots/bot-code.ts';
import { alreadyExists, ApiError, invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, isJsonObject, mergeMap } from '../shared/json.ts';
import type { Json } from '../shared/json.ts';
import { JsonObject, NullableMap, TagChangeMap, Timestamp } from '../shared/schemas.ts';
import { nowIso } from '../shared/time.ts';
import { newSigningSecret } from '../webhooks/signatures.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';

/** A name as `bp deploy` sends it: `handle/name` (or a bare name), lower case. */
const IntegrationName = Type.String({ pattern: '^([a-z0-9][a-z0-9-]{0,49}/)?[a-z0-9][a-z0-9-_]{0,99}$' });
const SemVer = Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.-]+)?$', maxLength: 100 });

/** The parts of a definition kept as they are sent: each a map of named entries (null removes one on update). */
const DEFINITION_MAPS = [
  'channels',
  'states',
  'events',
  'actions',
  'entities',
  'interfaces',
  'configurations',
] as const;
type DefinitionMap = (typeof DEFINITION_MAPS)[number];

const describedFields = {
  title: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  icon: Type.Optional(Type.String({ description: 'An SVG, in base64' })),
  readme: Type.Optional(Type.String({ description: 'Markdown, in base64' })),
  configuration: Type.Optional(JsonObject),
  identifier: Type.Optional(JsonObject),
  user: Type.Optional(JsonObject),
  sdkVersion: Type.Optional(Type.String()),
  code: Type.Optional(Type.String({ description: 'The bundle `bp build` made' })),
  url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  public: Type.Optional(Type.Boolean()),
};

const Changes = Type.Optional(NullableMap(JsonObject));
const definitionChanges = {
  channels: Changes,
  states: Changes,
  events: Changes,
  actions: Changes,
  entities: Changes,
  interfaces: Changes,
  configurations: Changes,
} satisfies Record<DefinitionMap, typeof Changes>;

export const UpdateIntegrationBodySchema = Type.Object({
  ...describedFields,
  ...definitionChanges,
  secrets: Type.Optional(TagChangeMap),
});
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBodySchema>;

export const CreateIntegrationBodySchema = Type.Object({
  name: IntegrationName,
  version: SemVer,
  ...describedFields,
  ...definitionChanges,
  secrets: Type.Optional(TagChangeMap),
  dev: Type.Optional(Type.Boolean()),
});
export type CreateIntegrationBody = Static<typeof CreateIntegrationBodySchema>;

const Entries = Type.Record(Type.String(), JsonObject);

export const IntegrationSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  name: Type.String(),
  version: Type.String(),
  title: Type.String(),
  description: Type.String(),
  iconUrl: Type.String(),
  readmeUrl: Type.String(),
  public: Type.Boolean(),
  visibility: Type.String(),
  verificationStatus: Type.String(),
  dev: Type.Boolean(),
  url: Type.Union([Type.String(), Type.Null()]),
  sdkVersion: Type.Optional(Type.String()),
  configuration: JsonObject,
  identifier: JsonObject,
  user: JsonObject,
  channels: Entries,
  states: Entries,
  events: Entries,
  actions: Entries,
  entities: Entries,
  interfaces: Entries,
  configurations: Entries,
  secrets: Type.Array(Type.String(), { description: 'Names only: values never leave the server' }),
  hasCode: Type.Boolean({ description: 'Whether a bundle was deployed to run it' }),
});
export type Integration = Static<typeof IntegrationSchema>;

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

export interface ListIntegrationsQuery {
  name?: string;
  version?: string;
}

/** How many integrations a listing answers (the hosted API pages; a workspace here holds few). */
const MAX_LISTED = 100;

/**
 * The integrations a workspace deployed (`bp deploy` of an integration project): each a name and a
 * version, its definition and the bundle that runs it. Parley has no hub of public integrations: an
 * integration is the workspace's own.
 */
export class Integrations {
  constructor(private readonly db: Db) {}

  async create(actor: WorkspaceActor, body: CreateIntegrationBody): Promise<Integration> {
    requireRole(actor.role, 'bots.write');
    checkCode(body.code);
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
    checkCode(body.code);
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

  async list(actor: WorkspaceActor, query: ListIntegrationsQuery): Promise<Integration[]> {
    let select = this.db.selectFrom('integrations').selectAll().where('workspace_id', '=', actor.workspaceId);
    if (query.name !== undefined) select = select.where('name', '=', query.name);
    if (query.version !== undefined) select = select.where('version', '=', query.version);
    const rows = await select.orderBy('created_at', 'desc').orderBy('id').limit(MAX_LISTED).execute();
    return rows.map(toIntegration);
  }

  /** An integration installed on a bot stays until it is uninstalled. */
  async delete(actor: WorkspaceActor, id: string): Promise<void> {
    requireRole(actor.role, 'bots.write');
    await this.requireRow(actor, id);
    const installed = await this.db
      .selectFrom('bot_integrations')
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

/** Only a bundle built by `bp build` runs as an integration (a Parley bot package is no integration). */
function checkCode(code: string | undefined): void {
  if (code === undefined || code.trim() === '') return;
  if (runtimeOf(code) !== SDK_RUNTIME)
    throw invalidPayload('code: an integration runs a CommonJS bundle built by `bp build`');
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
