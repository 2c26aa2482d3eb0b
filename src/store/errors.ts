/** What the store's errors mean, whichever database raised them (no driver is loaded here). */

/** A statement the database cancelled because it ran past the statement timeout. */
export function isStatementTimeout(err: unknown): boolean {
  return codeOf(err) === '57014';
}

/** Postgres's, and SQLite's two codes for a row that a unique index already has. */
const UNIQUE_VIOLATIONS: readonly unknown[] = [
  '23505',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
];

/** An insert or update refused because a unique index already has the value. */
export function isUniqueViolation(err: unknown): boolean {
  return codeOf(err) !== undefined && UNIQUE_VIOLATIONS.includes(codeOf(err));
}

function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
}
