import type { Db } from '../../store/index.ts';
import { OWNER_EMAIL } from './bootstrap.ts';

/**
 * The server's operator: the account made at first start (`owner@parley.local`), whose token only
 * someone on the server's machine can mint (`parley token create`). It acts for the whole server, not
 * one workspace: it publishes integrations, interfaces and plugins to every workspace's hub. An
 * account's email never changes, so no other account can become it.
 */
export class Operator {
  constructor(private readonly db: Db) {}

  async is(accountId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('accounts')
      .select('email')
      .where('id', '=', accountId)
      .executeTakeFirst();
    return row?.email === OWNER_EMAIL;
  }
}
