import type { Store } from '../store/index.ts';
import { Accounts } from './accounts.ts';
import { Analytics } from './analytics.ts';
import { Auth } from './auth.ts';
import { BotKeys } from './bot-keys.ts';
import { Bots } from './bots.ts';
import { Members } from './members.ts';
import { Workspaces } from './workspaces.ts';

/** Every domain service, wired to one store. The API, the engine and the CLI all go through these. */
export interface Domain {
  store: Store;
  accounts: Accounts;
  workspaces: Workspaces;
  members: Members;
  bots: Bots;
  botKeys: BotKeys;
  auth: Auth;
  analytics: Analytics;
}

export function createDomain(store: Store): Domain {
  const { db } = store;
  const accounts = new Accounts(db);
  const members = new Members(db, accounts);
  return {
    store,
    accounts,
    workspaces: new Workspaces(db),
    members,
    bots: new Bots(db),
    botKeys: new BotKeys(db),
    auth: new Auth(db, members),
    analytics: new Analytics(db),
  };
}
