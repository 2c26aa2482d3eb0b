import type { AccountActor, Principal } from '../../domain/workspace/actors.ts';
import type { accountOperations, introspectionOperations } from '../../contract/admin/account.ts';
import { introspect } from '../../domain/workspace/auth.ts';
import type { Handlers } from '../operation.ts';

export const accountHandlers = {
  getAccount: async (d, actor) => ({ account: await d.accounts.get(actor.accountId) }),
  updateAccount: async (d, actor, body) => ({ account: await d.accounts.update(actor.accountId, body) }),
  listPersonalAccessTokens: async (d, actor) => ({ pats: await d.accounts.listTokens(actor.accountId) }),
  createPersonalAccessToken: async (d, actor, { note }) => ({
    pat: await d.accounts.createToken(actor.accountId, note),
  }),
  deletePersonalAccessToken: async (d, actor, { id }) => {
    await d.accounts.deleteToken(actor.accountId, id);
    return {};
  },
} satisfies Handlers<AccountActor, typeof accountOperations>;

export const introspectionHandlers = {
  introspect: (d, principal, { botId }) => introspect(d.auth, principal, botId),
} satisfies Handlers<Principal, typeof introspectionOperations>;
