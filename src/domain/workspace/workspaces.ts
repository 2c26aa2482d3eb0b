import type { Db } from '../../store/index.ts';
import type { Caches } from '../shared/caches.ts';
import { isUniqueViolation, toCount } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { WorkspaceActor } from './actors.ts';
import { alreadyExists, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { requireRole } from './roles.ts';
import { nowIso } from '../shared/time.ts';
import { deleteTags } from '../shared/tags.ts';
import { notDraftTwin } from '../bots/draft-twins.ts';
import type { Workspace, WorkspaceChanges, WorkspaceProfile } from './schemas.ts';

const PROFILE_KEYS = [
  'about',
  'profilePicture',
  'contactEmail',
  'website',
  'socialAccounts',
  'isPublic',
] as const;

const keyset = new Keyset('workspaces.created_at', 'asc', 'workspaces.id');

export class Workspaces {
  constructor(
    private readonly db: Db,
    private readonly caches: Caches,
  ) {}

  /** The creator becomes the owner. */
  async create(accountId: string, name: string): Promise<Workspace> {
    const now = nowIso();
    const row: Row<'workspaces'> = {
      id: newId('workspace'),
      name,
      owner_id: accountId,
      handle: null,
      profile: '{}',
      spending_limit: 0,
      ai_spend_limit: null,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('workspaces').values(row).execute();
      await trx
        .insertInto('workspace_members')
        .values({
          id: newId('member'),
          workspace_id: row.id,
          account_id: accountId,
          role: 'owner',
          created_at: now,
        })
        .execute();
    });
    return this.toWorkspace(row);
  }

  /** The owner's account id, or undefined when there is no such workspace. */
  async ownerOf(workspaceId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('workspaces')
      .select('owner_id')
      .where('id', '=', workspaceId)
      .executeTakeFirst();
    return row?.owner_id;
  }

  /** Any member may read its workspace; to anyone else it does not exist. */
  async get(accountId: string, workspaceId: string): Promise<Workspace> {
    const row = await this.db
      .selectFrom('workspaces')
      .innerJoin('workspace_members', 'workspace_members.workspace_id', 'workspaces.id')
      .selectAll('workspaces')
      .where('workspaces.id', '=', workspaceId)
      .where('workspace_members.account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw notFound('Workspace', workspaceId);
    return this.toWorkspace(row);
  }

  async list(accountId: string, request: PageRequest & { handle?: string }): Promise<Page<Workspace>> {
    const pageSize = pageSizeOf(request);
    const cursor = keyset.decode(request.nextToken);
    let query = this.db
      .selectFrom('workspaces')
      .innerJoin('workspace_members', 'workspace_members.workspace_id', 'workspaces.id')
      .selectAll('workspaces')
      .where('workspace_members.account_id', '=', accountId);
    if (request.handle !== undefined) query = query.where('workspaces.handle', '=', request.handle);
    if (cursor) query = query.where(keyset.after(cursor));
    const rows = await query
      .orderBy('workspaces.created_at', keyset.direction)
      .orderBy('workspaces.id', keyset.direction)
      .limit(pageSize + 1)
      .execute();
    const page = keyset.page(rows, pageSize, (r) => [r.created_at, r.id]);
    const counts = await this.botCounts(page.items.map((r) => r.id));
    return { ...page, items: page.items.map((r) => this.shape(r, counts.get(r.id) ?? 0)) };
  }

  async update(actor: WorkspaceActor, workspaceId: string, changes: WorkspaceChanges): Promise<Workspace> {
    const current = await this.requireOwn(actor, workspaceId);
    requireRole(actor.role, 'workspace.update');
    const profile = JSON.parse(current.profile) as WorkspaceProfile;
    for (const key of PROFILE_KEYS) {
      if (changes[key] !== undefined) Object.assign(profile, { [key]: changes[key] });
    }
    const row: Row<'workspaces'> = {
      ...current,
      name: changes.name ?? current.name,
      spending_limit: changes.spendingLimit ?? current.spending_limit,
      handle: changes.handle ?? current.handle,
      profile: JSON.stringify(profile),
      updated_at: nowIso(),
    };
    try {
      await this.db.updateTable('workspaces').set(row).where('id', '=', workspaceId).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw alreadyExists(`The handle "${changes.handle}" is taken`);
      throw err;
    }
    return this.toWorkspace(row);
  }

  /** Whether a handle is free to claim; a taken one comes with free ones like it. */
  async handleAvailability(handle: string): Promise<{ available: boolean; suggestions: string[] }> {
    const taken = await this.db
      .selectFrom('workspaces')
      .select('handle')
      .where('handle', 'like', `${handle}%`)
      .execute();
    const names = new Set(taken.map((row) => row.handle));
    if (!names.has(handle)) return { available: true, suggestions: [] };
    const suggestions: string[] = [];
    for (let n = 2; suggestions.length < 3; n++) {
      const candidate = `${handle.slice(0, 45)}-${n}`;
      if (!names.has(candidate)) suggestions.push(candidate);
    }
    return { available: false, suggestions };
  }

  async delete(actor: WorkspaceActor, workspaceId: string): Promise<void> {
    await this.requireOwn(actor, workspaceId);
    requireRole(actor.role, 'workspace.delete');
    await this.db.transaction().execute(async (trx) => {
      const bots = await trx
        .selectFrom('bots')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .execute();
      await deleteTags(
        trx,
        bots.map((b) => b.id),
      );
      // Members, bots and everything of the bots go with the workspace (foreign keys cascade).
      await trx.deleteFrom('workspaces').where('id', '=', workspaceId).execute();
    });
    this.caches.accessChanged();
  }

  /** Routes carrying a workspace id act on the actor's own workspace only; others are not found. */
  private async requireOwn(actor: WorkspaceActor, workspaceId: string): Promise<Row<'workspaces'>> {
    if (actor.workspaceId !== workspaceId) throw notFound('Workspace', workspaceId);
    const row = await this.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', workspaceId)
      .executeTakeFirst();
    if (!row) throw notFound('Workspace', workspaceId);
    return row;
  }

  private async botCounts(workspaceIds: string[]): Promise<Map<string, number>> {
    if (workspaceIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('bots')
      .select(['workspace_id', (eb) => eb.fn.countAll().as('count')])
      .where('workspace_id', 'in', workspaceIds)
      .where(notDraftTwin)
      .groupBy('workspace_id')
      .execute();
    return new Map(rows.map((r) => [r.workspace_id, toCount(r.count)]));
  }

  private async toWorkspace(row: Row<'workspaces'>): Promise<Workspace> {
    const counts = await this.botCounts([row.id]);
    return this.shape(row, counts.get(row.id) ?? 0);
  }

  private shape(row: Row<'workspaces'>, botCount: number): Workspace {
    return {
      id: row.id,
      name: row.name,
      ownerId: row.owner_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      botCount,
      billingVersion: 'v4',
      plan: 'community',
      blocked: false,
      spendingLimit: row.spending_limit,
      ...(JSON.parse(row.profile) as WorkspaceProfile),
      ...(row.handle !== null && { handle: row.handle }),
      activeTrialId: null,
    };
  }
}
