import { ROLES } from '../../value-sets.ts';
import type { Role } from '../../value-sets.ts';

// What each workspace role may do: pure, so that the console (which hides what a role may not do)
// bundles these very rules; the server enforces them (roles.ts).

const RANK: Record<Role, number> = {
  viewer: 0,
  billing: 0,
  agent: 1,
  developer: 2,
  manager: 3,
  administrator: 4,
  owner: 5,
};

export type Action =
  | 'read'
  | 'bots.write'
  /** Writing through the Runtime, Files and Tables APIs as one of the workspace's bots. */
  | 'runtime.write'
  | 'botKeys.manage'
  /** Reading the workspace's own model providers (their URLs and models; never their keys). */
  | 'llmProviders.read'
  /** Taking, answering, transferring and resolving human handoffs (reading them is `read`). */
  | 'handoffs.answer'
  | 'members.manage'
  | 'workspace.update'
  | 'workspace.delete';

/** What each action needs, at least. Reading is open to every member. */
export const REQUIRED: Readonly<Record<Action, Role>> = {
  read: 'viewer',
  'bots.write': 'developer',
  'runtime.write': 'developer',
  'botKeys.manage': 'developer',
  'llmProviders.read': 'developer',
  'handoffs.answer': 'agent',
  'members.manage': 'manager',
  'workspace.update': 'administrator',
  'workspace.delete': 'owner',
};

export function rankOf(role: Role): number {
  return RANK[role];
}

export function can(role: Role, action: Action): boolean {
  return RANK[role] >= RANK[REQUIRED[action]];
}

/** The roles a member with `role` may hand out: up to their own (an owner any). */
export function assignableBy(role: Role): Role[] {
  return ROLES.filter((r) => RANK[r] <= RANK[role]);
}
