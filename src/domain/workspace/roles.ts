import { forbidden } from '../shared/errors.ts';
import { ROLES } from '../../value-sets.ts';
import type { Role } from '../../value-sets.ts';
import { can, REQUIRED } from './role-rules.ts';
import type { Action } from './role-rules.ts';

/** The roles, lowest to highest (src/value-sets.ts), with the rules over them (role-rules.ts). */
export { ROLES };
export type { Role, Action };
export { can, rankOf } from './role-rules.ts';

export function requireRole(role: Role, action: Action): void {
  if (!can(role, action)) {
    throw forbidden(`The ${role} role may not do this (${action} needs ${REQUIRED[action]} or above)`);
  }
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
