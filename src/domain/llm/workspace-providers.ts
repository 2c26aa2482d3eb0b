import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isUniqueViolation } from '../../store/index.ts';
import type { Db } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { TtlMap } from '../shared/caches.ts';
import { alreadyExists, ApiError, invalidPayload, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson } from '../shared/json.ts';
import { nowIso } from '../shared/time.ts';
import { checkTarget } from '../webhooks/targets.ts';
import type { WorkspaceActor } from '../workspace/actors.ts';
import { requireRole } from '../workspace/roles.ts';
import { listModels, ProviderFailure, withDeadline } from './openai-compatible.ts';
import { MAX_PROVIDERS_PER_WORKSPACE } from './provider-schemas.ts';
import type { CreateLlmProviderBody, LlmProvider, Price, UpdateLlmProviderBody } from './provider-schemas.ts';
import { DEFAULT_PROVIDER } from './providers.ts';
import type { Provider, ProviderConnections } from './providers.ts';

/** The setting that lets workspaces' providers be on loopback or a private network. */
const PRIVATE_TARGETS_SETTING = 'PARLEY_LLM_PRIVATE_TARGETS';
/** How long reading a provider's `GET /models` may take when it is created or refreshed. */
const READ_MODELS_MS = 10_000;

/** How this server reaches workspaces' providers: a tenant's targets, unlike the operator's provider. */
export interface TenantTargets {
  /** Connections only where the address policy of tenants' targets allows (server.ts makes them). */
  connections: ProviderConnections;
  /** Whether loopback and private addresses are allowed (`PARLEY_LLM_PRIVATE_TARGETS`). */
  allowPrivate: boolean;
}

/** Where no fetch was given (a one-off command's domain): no workspace provider is reached. */
export const UNREACHABLE_TARGETS: TenantTargets = {
  connections: {
    agents: { http: new HttpAgent(), https: new HttpsAgent() },
    refusal: () => 'not reached from this process',
  },
  allowPrivate: false,
};

function checkBaseUrl(raw: string, allowPrivate: boolean): string {
  const url = checkTarget(raw, 'baseUrl', {
    allowPrivate,
    setting: PRIVATE_TARGETS_SETTING,
    instead: 'give the key as apiKey',
  });
  return url.href.replace(/\/+$/, '');
}

function toProvider(row: Row<'llm_providers'>): LlmProvider {
  return {
    name: row.name,
    baseUrl: row.base_url,
    hasApiKey: row.api_key !== null,
    models: fromJson<string[]>(row.models),
    modelsFrom: row.models_from,
    prices: fromJson<Record<string, Price>>(row.prices),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The OpenAI-compatible providers a workspace adds beside the server's (`<name>:<model>` routes to
 * them): each with its key, written here and never answered again, and the models it serves, declared
 * or read from its `GET /models`. Their base URLs are a tenant's targets: checked against the address
 * policy of outgoing webhooks when set, and connected to only through it.
 */
export class LlmProviders {
  /** Workspace id -> its providers by name, as the gateway routes to them. */
  private readonly routes = new TtlMap<ReadonlyMap<string, Provider>>();

  constructor(
    private readonly db: Db,
    private readonly targets: TenantTargets,
  ) {}

  async list(actor: WorkspaceActor): Promise<LlmProvider[]> {
    requireRole(actor.role, 'llmProviders.read');
    const rows = await this.db
      .selectFrom('llm_providers')
      .selectAll()
      .where('workspace_id', '=', actor.workspaceId)
      .orderBy('name')
      .execute();
    return rows.map(toProvider);
  }

  async create(actor: WorkspaceActor, body: CreateLlmProviderBody): Promise<LlmProvider> {
    requireRole(actor.role, 'workspace.update');
    if (body.name === DEFAULT_PROVIDER)
      throw invalidPayload(`name: "${DEFAULT_PROVIDER}" is the server’s provider`);
    const baseUrl = checkBaseUrl(body.baseUrl, this.targets.allowPrivate);
    const id = newId('llmProvider');
    const apiKey = body.apiKey ?? null;
    const declared = body.models !== undefined;
    const models = declared ? body.models : await this.readModels({ id, name: body.name, baseUrl, apiKey });
    const now = nowIso();
    const row: Row<'llm_providers'> = {
      id,
      workspace_id: actor.workspaceId,
      name: body.name,
      base_url: baseUrl,
      api_key: apiKey,
      models: JSON.stringify([...new Set(models)]),
      models_from: declared ? 'declared' : 'provider',
      prices: JSON.stringify(body.prices ?? {}),
      created_at: now,
      updated_at: now,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        const { count } = await trx
          .selectFrom('llm_providers')
          .select((eb) => eb.fn.countAll<number | string>().as('count'))
          .where('workspace_id', '=', actor.workspaceId)
          .executeTakeFirstOrThrow();
        if (Number(count) >= MAX_PROVIDERS_PER_WORKSPACE) {
          throw new ApiError(
            'LimitExceeded',
            `A workspace has at most ${MAX_PROVIDERS_PER_WORKSPACE} model providers; delete one first`,
          );
        }
        await trx.insertInto('llm_providers').values(row).execute();
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw alreadyExists(`The workspace already has a model provider named "${body.name}"`);
      throw err;
    }
    this.routes.delete(actor.workspaceId);
    return toProvider(row);
  }

  /** Changes what is given; `models` declares the list (a refresh reads it from the provider again). */
  async update(actor: WorkspaceActor, name: string, body: UpdateLlmProviderBody): Promise<LlmProvider> {
    requireRole(actor.role, 'workspace.update');
    const row = await this.row(actor, name);
    const changed: Row<'llm_providers'> = {
      ...row,
      ...(body.baseUrl !== undefined && {
        base_url: checkBaseUrl(body.baseUrl, this.targets.allowPrivate),
      }),
      ...(body.apiKey !== undefined && { api_key: body.apiKey }),
      ...(body.models !== undefined && {
        models: JSON.stringify([...new Set(body.models)]),
        models_from: 'declared' as const,
      }),
      ...(body.prices !== undefined && { prices: JSON.stringify(body.prices) }),
      updated_at: nowIso(),
    };
    return this.write(changed);
  }

  /** Reads the provider's `GET /models` again: its list is what the provider says from now on. */
  async refreshModels(actor: WorkspaceActor, name: string): Promise<LlmProvider> {
    requireRole(actor.role, 'workspace.update');
    const row = await this.row(actor, name);
    const models = await this.readModels({
      id: row.id,
      name: row.name,
      baseUrl: row.base_url,
      apiKey: row.api_key,
    });
    return this.write({
      ...row,
      models: JSON.stringify([...new Set(models)]),
      models_from: 'provider',
      updated_at: nowIso(),
    });
  }

  /** Bots that chose one of its models for `best` or `fast` go back to the server's. */
  async delete(actor: WorkspaceActor, name: string): Promise<void> {
    requireRole(actor.role, 'workspace.update');
    await this.db.transaction().execute(async (trx) => {
      const deleted = await trx
        .deleteFrom('llm_providers')
        .where('workspace_id', '=', actor.workspaceId)
        .where('name', '=', name)
        .executeTakeFirst();
      if (deleted.numDeletedRows === 0n) throw notFound('Model provider', name);
      const bots = trx.selectFrom('bots').select('id').where('workspace_id', '=', actor.workspaceId);
      // Names are [a-z0-9-]: nothing in them is a LIKE pattern.
      for (const column of ['best', 'fast'] as const) {
        await trx
          .updateTable('bot_llm_models')
          .set({ [column]: null, updated_at: nowIso() })
          .where('bot_id', 'in', bots)
          .where(column, 'like', `${name}:%`)
          .execute();
      }
    });
    this.routes.delete(actor.workspaceId);
  }

  /** The workspace's providers by name, as the gateway reaches them (read at most every two seconds). */
  async forWorkspace(workspaceId: string): Promise<ReadonlyMap<string, Provider>> {
    return this.routes.through(workspaceId, async () => {
      const rows = await this.db
        .selectFrom('llm_providers')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .execute();
      return new Map(rows.map((row) => [row.name, this.reachable(row)] as const));
    });
  }

  /** The model ids of each of the workspace's providers, by name. */
  async modelsOf(workspaceId: string): Promise<Map<string, string[]>> {
    const rows = await this.db
      .selectFrom('llm_providers')
      .select(['name', 'models'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('name')
      .execute();
    return new Map(rows.map((row) => [row.name, fromJson<string[]>(row.models)]));
  }

  private reachable(row: Row<'llm_providers'>): Provider {
    return {
      id: row.id,
      name: row.name,
      baseUrl: row.base_url,
      apiKey: row.api_key ?? undefined,
      connections: this.targets.connections,
      prices: fromJson<Record<string, Price>>(row.prices),
    };
  }

  private async row(actor: WorkspaceActor, name: string): Promise<Row<'llm_providers'>> {
    const row = await this.db
      .selectFrom('llm_providers')
      .selectAll()
      .where('workspace_id', '=', actor.workspaceId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) throw notFound('Model provider', name);
    return row;
  }

  private async write(row: Row<'llm_providers'>): Promise<LlmProvider> {
    await this.db
      .updateTable('llm_providers')
      .set({
        base_url: row.base_url,
        api_key: row.api_key,
        models: row.models,
        models_from: row.models_from,
        prices: row.prices,
        updated_at: row.updated_at,
      })
      .where('id', '=', row.id)
      .execute();
    this.routes.delete(row.workspace_id);
    return toProvider(row);
  }

  /** The provider's `GET /models`, through the address policy; what it cannot say is the caller's 400. */
  private async readModels(row: {
    id: string;
    name: string;
    baseUrl: string;
    apiKey: string | null;
  }): Promise<string[]> {
    const provider: Provider = {
      id: row.id,
      name: row.name,
      baseUrl: row.baseUrl,
      apiKey: row.apiKey ?? undefined,
      connections: this.targets.connections,
    };
    let models: string[];
    try {
      models = await withDeadline(READ_MODELS_MS, undefined, (signals) => listModels(provider, signals));
    } catch (err) {
      if (!(err instanceof ProviderFailure)) throw err;
      throw invalidPayload(`models: its GET /models could not be read (${err.message}); declare them`);
    }
    if (models.length === 0) throw invalidPayload('models: its GET /models lists none; declare them');
    return models;
  }
}
