/** What the store's errors mean, whichever database raised them (no driver is loaded here). */

/** A statement the database cancelled because it ran past the statement timeout. */
export function isStatementTimeout(err: unknown): boolean {
  return codeOf(err) === '57014';
}

/**
 * A statement that ran past a time limit: Postgres's statement timeout, or the watchdog of SQLite's
 * statements that match regular expressions (src/store/sqlite-functions.ts).
 */
export function isQueryTimeout(err: unknown): boolean {
  return isStatementTimeout(err) || codeOf(err) === 'PARLEY_REGEX_TIMEOUT';
}

/** An invalid regular expression, as Postgres reports it. */
export function isInvalidRegex(err: unknown): boolean {
  return codeOf(err) === '2201B';
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
