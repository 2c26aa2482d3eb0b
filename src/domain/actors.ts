import type { Role } from './roles.ts';

/** Who presented a valid token. */
export type Principal =
  { kind: 'account'; accountId: string } | { kind: 'botKey'; botId: string; workspaceId: string };

/** An account acting in one workspace it is a member of, with its role there. */
export interface WorkspaceActor {
  accountId: string;
  workspaceId: string;
  role: Role;
}

/** Whoever acts as one bot: callers of the Runtime, Files and Tables APIs, the Chat API, bot code. */
export interface BotActor {
  botId: string;
  workspaceId: string;
}
