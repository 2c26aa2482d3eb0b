import { forbidden } from '../shared/errors.ts';
import { ROLES } from '../../value-sets.ts';
import type { Role } from '../../value-sets.ts';

/** The roles, lowest to highest (src/value-sets.ts), with the rules over them below. */
export { ROLES };
export type { Role };

const RANK: Record<Role, number> = {
  viewer: 0,
  billing: 0,
  developer: 1,
  manager: 2,
  administrator: 3,
  owner: 4,
};

/** What each action needs, at least. Reading is open to every member. */
const REQUIRED: Record<Action, Role> = {
  read: 'viewer',
  'bots.write': 'developer',
  'runtime.write': 'developer',
  'botKeys.manage': 'developer',
  'llmProviders.read': 'developer',
  'members.manage': 'manager',
  'workspace.update': 'administrator',
  'workspace.delete': 'owner',
};

export type Action =
  | 'read'
  | 'bots.write'
  /** Writing through the Runtime, Files and Tables APIs as one of the workspace's bots. */
  | 'runtime.write'
  | 'botKeys.manage'
  /** Reading the workspace's own model providers (their URLs and models; never their keys). */
  | 'llmProviders.read'
  | 'members.manage'
  | 'workspace.update'
  | 'workspace.delete';

export function rankOf(role: Role): number {
  return RANK[role];
}

export function can(role: Role, action: Action): boolean {
  return RANK[role] >= RANK[REQUIRED[action]];
}

export function requireRole(role: Role, action: Action): void {
  if (!can(role, action)) {
    throw forbidden(`The ${role} role may not do this (${action} needs ${REQUIRED[action]} or above)`);
  }
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
