import type { Db } from '../../store/index.ts';
import type { Caches } from '../shared/caches.ts';
import { isUniqueViolation } from '../../store/index.ts';
import type { Accounts } from './accounts.ts';
import type { WorkspaceActor } from './actors.ts';
import { alreadyExists, forbidden, notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { isRole, rankOf, requireRole } from './roles.ts';
import type { Role } from './roles.ts';
import { nowIso } from '../shared/time.ts';
import type { Member } from './schemas.ts';

interface MemberRow {
  id: string;
  account_id: string;
  role: string;
  created_at: string;
  email: string;
  display_name: string | null;
  profile_picture: string | null;
  owner_id: string;
}

const keyset = new Keyset('workspace_members.created_at', 'asc', 'workspace_members.id');

function toMember(row: MemberRow): Member {
  return {
    id: row.id,
    userId: row.account_id,
    email: row.email,
    createdAt: row.created_at,
    role: isRole(row.role) ? row.role : 'viewer',
    ...(row.display_name !== null && { displayName: row.display_name }),
    ...(row.profile_picture !== null && { profilePicture: row.profile_picture }),
  };
}

export class Members {
  constructor(
    private readonly db: Db,
    private readonly accounts: Accounts,
    private readonly caches: Caches,
  ) {}

  /** The role of an account in a workspace, or undefined when it is not a member. */
  async roleOf(accountId: string, workspaceId: string): Promise<Role | undefined> {
    const row = await this.db
      .selectFrom('workspace_members')
      .select('role')
      .where('workspace_id', '=', workspaceId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row && isRole(row.role) ? row.role : undefined;
  }

  async list(actor: WorkspaceActor, request: PageRequest): Promise<Page<Member>> {
    const pageSize = pageSizeOf(request);
    const cursor = keyset.decode(request.nextToken);
    let query = this.rows().where('workspace_members.workspace_id', '=', actor.workspaceId);
    if (cursor) query = query.where(keyset.after(cursor));
    const rows = await query
      .orderBy('workspace_members.created_at', 'asc')
      .orderBy('workspace_members.id', 'asc')
      .limit(pageSize + 1)
      .execute();
    const page = keyset.page(rows, pageSize, (r) => [r.created_at, r.id]);
    return { ...page, items: page.items.map(toMember) };
  }

  async me(actor: WorkspaceActor): Promise<Member> {
    const row = await this.rows()
      .where('workspace_members.workspace_id', '=', actor.workspaceId)
      .where('workspace_members.account_id', '=', actor.accountId)
      .executeTakeFirst();
    if (!row) throw notFound('Workspace member', actor.accountId);
    return toMember(row);
  }

  /** Adds an account (created on first use, keyed by email) to the actor's workspace. */
  async create(actor: WorkspaceActor, email: string, role: Role): Promise<Member> {
    requireRole(actor.role, 'members.manage');
    this.requireMayGrant(actor, role);
    const id = newId('member');
    try {
      await this.db.transaction().execute(async (trx) => {
        const account = await this.accounts.getOrCreateByEmail(email, trx);
        await trx
          .insertInto('workspace_members')
          .values({ id, workspace_id: actor.workspaceId, account_id: account.id, role, created_at: nowIso() })
          .execute();
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw alreadyExists(`${email} is already a member of this workspace`);
      throw err;
    }
    this.caches.accessChanged();
    return this.get(actor, id);
  }

  async update(actor: WorkspaceActor, memberId: string, role: Role | undefined): Promise<Member> {
    requireRole(actor.role, 'members.manage');
    const member = await this.get(actor, memberId);
    if (role === undefined || role === member.role) return member;
    await this.requireMayManage(actor, member);
    this.requireMayGrant(actor, role);
    await this.db.updateTable('workspace_members').set({ role }).where('id', '=', memberId).execute();
    return { ...member, role };
  }

  /** A member may always leave; removing someone else needs the manage permission. */
  async delete(actor: WorkspaceActor, memberId: string): Promise<void> {
    const member = await this.get(actor, memberId);
    if (member.userId !== actor.accountId) {
      requireRole(actor.role, 'members.manage');
      await this.requireMayManage(actor, member);
    } else {
      await this.requireNotOwner(actor, member);
    }
    await this.db.deleteFrom('workspace_members').where('id', '=', memberId).execute();
    this.caches.accessChanged();
  }

  private async get(actor: WorkspaceActor, memberId: string): Promise<Member> {
    const row = await this.rows()
      .where('workspace_members.workspace_id', '=', actor.workspaceId)
      .where('workspace_members.id', '=', memberId)
      .executeTakeFirst();
    if (!row) throw notFound('Workspace member', memberId);
    return toMember(row);
  }

  private requireMayGrant(actor: WorkspaceActor, role: Role): void {
    if (rankOf(role) > rankOf(actor.role)) {
      throw forbidden(`A ${actor.role} may not grant the ${role} role`);
    }
  }

  private async requireMayManage(actor: WorkspaceActor, member: Member): Promise<void> {
    await this.requireNotOwner(actor, member);
    if (rankOf(member.role) > rankOf(actor.role)) {
      throw forbidden(`A ${actor.role} may not change a member whose role is ${member.role}`);
    }
  }

  private async requireNotOwner(actor: WorkspaceActor, member: Member): Promise<void> {
    const ws = await this.db
      .selectFrom('workspaces')
      .select('owner_id')
      .where('id', '=', actor.workspaceId)
      .executeTakeFirstOrThrow();
    if (ws.owner_id === member.userId) {
      throw forbidden("The workspace owner's membership cannot be changed or removed");
    }
  }

  private rows() {
    return this.db
      .selectFrom('workspace_members')
      .innerJoin('accounts', 'accounts.id', 'workspace_members.account_id')
      .innerJoin('workspaces', 'workspaces.id', 'workspace_members.workspace_id')
      .select([
        'workspace_members.id',
        'workspace_members.account_id',
        'workspace_members.role',
        'workspace_members.created_at',
        'accounts.email',
        'accounts.display_name',
        'accounts.profile_picture',
        'workspaces.owner_id',
      ]);
  }
}
