import type { Db } from '../../store/index.ts';
import type { Caches } from '../shared/caches.ts';
import type { BotActor, Principal, WorkspaceActor } from './actors.ts';
import { forbidden, unauthorized } from '../shared/errors.ts';
import { requireRole } from './roles.ts';
import type { Members } from './members.ts';
import { hashToken } from './tokens.ts';
import type { Access } from './access.ts';

/** Turns credentials into actors. Every refusal here is a 401 or 403, never a 404, so nothing leaks. */
export class Auth {
  constructor(
    private readonly db: Db,
    private readonly members: Members,
    private readonly caches: Caches,
  ) {}

  /** A token's principal, or undefined when the token is unknown. Only the hash is looked up. */
  async authenticate(token: string): Promise<Principal | undefined> {
    const hash = hashToken(token);
    const found = (await this.caches.principals.through(
      hash,
      async () => (await this.lookup(hash)) ?? null,
    )) as Principal | null | undefined;
    return found ?? undefined;
  }

  private async lookup(hash: string): Promise<Principal | undefined> {
    const pat = await this.db
      .selectFrom('personal_access_tokens')
      .select('account_id')
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    if (pat) return { kind: 'account', accountId: pat.account_id };
    const bak = await this.db
      .selectFrom('bot_api_keys')
      .innerJoin('bots', 'bots.id', 'bot_api_keys.bot_id')
      .leftJoin('integrations', 'integrations.id', 'bot_api_keys.integration_id')
      .select([
        'bot_api_keys.bot_id',
        'bots.workspace_id',
        'bot_api_keys.integration_alias',
        'integrations.name as integration',
      ])
      .where('bot_api_keys.token_hash', '=', hash)
      .executeTakeFirst();
    if (bak) {
      const principal: Principal = { kind: 'botKey', botId: bak.bot_id, workspaceId: bak.workspace_id };
      // The installation the key acts as, by its alias (a key made before aliases: the integration's name).
      const integration = bak.integration_alias ?? bak.integration;
      return integration === null ? principal : { ...principal, integration };
    }
    return undefined;
  }

  /** The Admin API acts for an account inside the workspace named by `x-workspace-id`. */
  async workspaceActor(principal: Principal, workspaceId: string | undefined): Promise<WorkspaceActor> {
    if (principal.kind !== 'account') throw unauthorized('A bot API key cannot be used on the Admin API');
    if (!workspaceId) throw unauthorized('The x-workspace-id header is required');
    const role = await this.members.roleOf(principal.accountId, workspaceId);
    if (!role) throw unauthorized(`The x-workspace-id "${workspaceId}" is not a workspace of this account`);
    return { accountId: principal.accountId, workspaceId, role };
  }

  /**
   * A bot's own key on the Admin API routes it may call for itself (getBot, and updateBot of its own
   * tags, as the ADK runtime does): a viewer of its workspace for that bot alone; any other bot is
   * forbidden.
   */
  botItself(principal: Principal & { kind: 'botKey' }, botId: string | undefined): WorkspaceActor {
    if (botId !== principal.botId)
      throw forbidden(`This API key does not give access to bot "${botId ?? ''}"`);
    return {
      accountId: principal.botId,
      workspaceId: principal.workspaceId,
      role: 'viewer',
      itself: principal.botId,
    };
  }

  /**
   * The Runtime, Files and Tables APIs act as the bot named by `x-bot-id`: reachable with that bot's
   * own key, or with a personal token of a member of the bot's workspace. A key of bot A never reaches bot B.
   */
  async botActor(principal: Principal, botId: string | undefined): Promise<BotActor> {
    if (!botId) throw unauthorized('The x-bot-id header is required');
    if (principal.kind === 'botKey') {
      if (principal.botId !== botId) throw forbidden(`This API key does not give access to bot "${botId}"`);
      const actor: BotActor = { botId, workspaceId: principal.workspaceId };
      return principal.integration === undefined ? actor : { ...actor, integration: principal.integration };
    }
    const accessKey = `${principal.accountId}:${botId}`;
    const access = await this.caches.botAccess.through(accessKey, async () => {
      const member = await this.db
        .selectFrom('bots')
        .innerJoin('workspace_members', 'workspace_members.workspace_id', 'bots.workspace_id')
        .select(['bots.workspace_id', 'workspace_members.role'])
        .where('bots.id', '=', botId)
        .where('workspace_members.account_id', '=', principal.accountId)
        .executeTakeFirst();
      return member ? { workspaceId: member.workspace_id, role: member.role } : null;
    });
    if (!access) throw forbidden(`This token does not give access to bot "${botId}"`);
    return { botId, workspaceId: access.workspaceId, role: access.role };
  }

  /**
   * Whether the caller may do what an operation does: the bot itself (its key, its code) anything; a
   * member of its workspace what the role allows (a viewer reads).
   */
  requireAccess(actor: BotActor, access: Access): void {
    if (access === 'write' && actor.role !== undefined) requireRole(actor.role, 'runtime.write');
  }
}

export interface Introspection {
  workspaceId: string;
  botId: string;
  userId: string;
}

/** What a token is, seen from one bot: tooling uses this to check a token before it deploys. */
export async function introspect(auth: Auth, principal: Principal, botId: string): Promise<Introspection> {
  const actor = await auth.botActor(principal, botId);
  const userId = principal.kind === 'account' ? principal.accountId : botId;
  return { workspaceId: actor.workspaceId, botId, userId };
}
