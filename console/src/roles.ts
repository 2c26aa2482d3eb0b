// What each workspace role may do, as the server decides it (src/domain/workspace/roles.ts): the console
// hides what the operator's role may not do. test/console-roles.test.ts keeps this table equal to the
// server's; the server still refuses on its own (403), and the console explains that refusal.
import type { Role } from './api/types.ts';

export type Action =
  | 'read'
  | 'bots.write'
  | 'botKeys.manage'
  | 'llmProviders.read'
  | 'members.manage'
  | 'workspace.update'
  | 'workspace.delete';

export const ROLES: readonly Role[] = ['viewer', 'billing', 'developer', 'manager', 'administrator', 'owner'];

const RANK: Record<Role, number> = {
  viewer: 0,
  billing: 0,
  developer: 1,
  manager: 2,
  administrator: 3,
  owner: 4,
};

export const REQUIRED: Record<Action, Role> = {
  read: 'viewer',
  'bots.write': 'developer',
  'botKeys.manage': 'developer',
  'llmProviders.read': 'developer',
  'members.manage': 'manager',
  'workspace.update': 'administrator',
  'workspace.delete': 'owner',
};

export function can(role: Role, action: Action): boolean {
  return RANK[role] >= RANK[REQUIRED[action]];
}

/** The roles a member with `role` may hand out (up to their own; an owner any). */
export function assignableBy(role: Role): Role[] {
  return ROLES.filter((r) => RANK[r] <= RANK[role]);
}
