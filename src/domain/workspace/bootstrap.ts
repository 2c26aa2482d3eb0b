import type { Db } from '../../store/index.ts';
import { isUniqueViolation, toCount } from '../../store/index.ts';
import type { Accounts } from './accounts.ts';
import { newId } from '../shared/ids.ts';
import { nowIso } from '../shared/time.ts';

export const OWNER_EMAIL = 'owner@parley.local';
export const DEFAULT_WORKSPACE_NAME = 'Default Workspace';

export type BootstrapResult =
  | { created: false }
  | { created: true; accountId: string; workspaceId: string; token: string; tokenGenerated: boolean };

/**
 * On first start with an empty store: an owner account, a workspace, and the owner's first token
 * (the configured one, or a random one the caller prints once). Two processes racing on a fresh
 * Postgres create one owner: the loser sees the unique email taken and does nothing.
 */
export async function bootstrap(
  db: Db,
  accounts: Accounts,
  adminToken: string | undefined,
): Promise<BootstrapResult> {
  const existing = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  if (toCount(existing.n) > 0) return { created: false };
  try {
    return await db.transaction().execute(async (trx) => {
      const account = await accounts.getOrCreateByEmail(OWNER_EMAIL, trx);
      const now = nowIso();
      const workspaceId = newId('workspace');
      await trx
        .insertInto('workspaces')
        .values({
          id: workspaceId,
          name: DEFAULT_WORKSPACE_NAME,
          owner_id: account.id,
          handle: null,
          profile: '{}',
          spending_limit: 0,
          ai_spend_limit: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await trx
        .insertInto('workspace_members')
        .values({
          id: newId('member'),
          workspace_id: workspaceId,
          account_id: account.id,
          role: 'owner',
          created_at: now,
        })
        .execute();
      const pat = await accounts.createToken(account.id, 'first start', adminToken, trx);
      return {
        created: true as const,
        accountId: account.id,
        workspaceId,
        token: pat.value,
        tokenGenerated: adminToken === undefined,
      };
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { created: false };
    throw err;
  }
}
