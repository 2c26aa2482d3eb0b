// What each workspace role may do: the server's own rules (src/domain/workspace/role-rules.ts), so that
// the console hides exactly what the server would refuse (403); the server still decides.
export { ROLES } from '../../src/value-sets.ts';
export { assignableBy, can } from '../../src/domain/workspace/role-rules.ts';
export type { Action } from '../../src/domain/workspace/role-rules.ts';
