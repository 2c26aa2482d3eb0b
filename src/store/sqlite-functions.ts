import vm from 'node:vm';
import type SqliteDatabase from 'better-sqlite3';
import { RE2JS } from 're2js';

/** Compiled patterns kept between rows and queries. */
const PATTERNS_KEPT = 200;

/** Runs one statement: as it is, or, when it matches regular expressions, under a watchdog. */
export type StatementRunner = <T>(sql: string, run: () => T) => T;

/**
 * SQL functions SQLite lacks and Parley's queries use, and the runner of the statements that call them.
 *
 * `parley_regexp(value, pattern, flags)`: 1 when RE2's regular expression (`flags` "i" ignores case)
 * matches somewhere in the value, 0 when not, null for a null value. The caller has checked the pattern
 * (src/store/regex/). RE2JS matches without backtracking, in time linear in the text, but linear
 * is not small: a pattern made to defeat RE2's DFA took 2 s on one row of 120 KB, and a table has many
 * rows. So a statement that calls it runs under a `node:vm` watchdog, which stops it, wherever it is
 * (between rows or within a match), after `regexTimeoutMs`; it then fails with a RegexTimeout, which
 * the caller reports as a query that ran too long. One watchdog a statement costs a fraction of a
 * millisecond; every row is matched as it comes.
 */
export function defineSqliteFunctions(
  database: SqliteDatabase.Database,
  /**
   * How long one statement that matches regular expressions may run (PARLEY_SQLITE_REGEX_TIMEOUT_MS).
   * SQLite runs on the server's one thread: this is how long one `$regex` query can hold every other
   * request, so it is kept short.
   */
  regexTimeoutMs: number,
): StatementRunner {
  const patterns = new RegexCache();
  database.function(
    'parley_regexp',
    { deterministic: true, varargs: false },
    (value: unknown, pattern: unknown, flags: unknown) => {
      if (typeof value !== 'string' || typeof pattern !== 'string') return null;
      return patterns.compiled(pattern, flags === 'i').test(value) ? 1 : 0;
    },
  );
  const watchdog = new Watchdog();
  return (sql, run) => {
    if (!sql.includes('parley_regexp(')) return run();
    try {
      return watchdog.run(run, regexTimeoutMs);
    } catch (err) {
      if (!(err instanceof RegexTimeout)) throw err;
      // A match stopped halfway may leave its pattern's caches halfway written: none is used again.
      patterns.clear();
      throw err;
    }
  };
}

class RegexCache {
  private readonly patterns = new Map<string, RE2JS>();

  compiled(pattern: string, ignoreCase: boolean): RE2JS {
    const key = `${ignoreCase ? 'i' : ''}/${pattern}`;
    let regex = this.patterns.get(key);
    if (!regex) {
      regex = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
      if (this.patterns.size >= PATTERNS_KEPT) this.patterns.clear();
      this.patterns.set(key, regex);
    }
    return regex;
  }

  clear(): void {
    this.patterns.clear();
  }
}

/** The work a watchdog runs, in the watchdog's context. */
interface Watched {
  work: (() => void) | undefined;
}

const WATCHED = new vm.Script('watched.work()');

/**
 * Runs work on this thread, stopped after a time: `node:vm`'s timeout, which interrupts JavaScript
 * wherever it is, including in a function that SQLite calls back.
 */
class Watchdog {
  private readonly watched: Watched = { work: undefined };
  /** Made at the first use (a context costs memory). */
  private context: vm.Context | undefined;

  run<T>(work: () => T, timeoutMs: number): T {
    let outcome: { value: T } | undefined;
    this.watched.work = () => {
      outcome = { value: work() };
    };
    try {
      this.context ??= vm.createContext({ watched: this.watched });
      WATCHED.runInContext(this.context, { timeout: timeoutMs });
    } catch (err) {
      throw isWatchdogTimeout(err) ? new RegexTimeout() : err;
    } finally {
      this.watched.work = undefined;
    }
    if (!outcome) throw new Error('the watched work did not run');
    return outcome.value;
  }
}

/** The watchdog's error (made in the watchdog's context: no `instanceof Error` of this one). */
function isWatchdogTimeout(err: unknown): boolean {
  return (
    typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
  );
}

/** A `$regex` statement that ran past its time: it fails with this error. */
export class RegexTimeout extends Error {
  readonly code = 'PARLEY_REGEX_TIMEOUT';
  constructor() {
    super('the regular expression ran past the query time limit');
  }
}
