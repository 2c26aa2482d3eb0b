import type SqliteDatabase from 'better-sqlite3';

/** Compiled patterns kept between rows and queries. */
const PATTERNS_KEPT = 200;

/**
 * SQL functions SQLite lacks and Parley's queries use.
 *
 * `parley_regexp(value, pattern, flags, deadline)`: 1 when the JavaScript regular expression (Unicode
 * mode, `i` for ignore case) matches, 0 when not, null for a null value. The caller has refused
 * patterns that backtrack exponentially; the deadline (epoch milliseconds) bounds the rest: past it the
 * statement fails, and the caller reports a query that ran too long.
 */
export function defineSqliteFunctions(database: SqliteDatabase.Database): void {
  const patterns = new Map<string, RegExp>();
  database.function(
    'parley_regexp',
    { deterministic: false, varargs: false },
    (value: unknown, pattern: unknown, flags: unknown, deadline: unknown) => {
      if (typeof value !== 'string' || typeof pattern !== 'string') return null;
      if (typeof deadline === 'number' && Date.now() > deadline) throw new RegexTimeout();
      const key = `${String(flags)}/${pattern}`;
      let regex = patterns.get(key);
      if (!regex) {
        regex = new RegExp(pattern, flags === 'i' ? 'iu' : 'u');
        if (patterns.size >= PATTERNS_KEPT) patterns.clear();
        patterns.set(key, regex);
      }
      return regex.test(value) ? 1 : 0;
    },
  );
}

/** A `$regex` query that ran past its deadline: the statement fails with this error. */
export class RegexTimeout extends Error {
  readonly code = 'PARLEY_REGEX_TIMEOUT';
  constructor() {
    super('the regular expression ran past the query time limit');
  }
}
