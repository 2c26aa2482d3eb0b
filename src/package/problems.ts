/**
 * One thing wrong with a bot package, located for a human and an editor: the file (relative to the
 * package folder, with `/` separators), the 1-based line and column, and the field as a JSON pointer
 * (e.g. `/nodes/2/cards/0/to`; empty for a code file or a whole JSON document).
 */
export interface Problem {
  file: string;
  line: number;
  column: number;
  field: string;
  message: string;
}

/** `file:line:col field: message`, the shape editors and terminals turn into links. */
export function formatProblem(problem: Problem, file = problem.file): string {
  const field = problem.field ? `${problem.field}: ` : '';
  return `${file}:${problem.line}:${problem.column} ${field}${problem.message}`;
}

/** Problems in file, then position, order: the order a developer fixes them in. */
export function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.column - b.column ||
      (a.field < b.field ? -1 : a.field > b.field ? 1 : 0),
  );
}

/** A package that does not validate: every problem found, reported at once. */
export class PackageError extends Error {
  readonly problems: Problem[];

  constructor(problems: Problem[]) {
    const sorted = sortProblems(problems);
    const count = sorted.length === 1 ? '1 problem' : `${sorted.length} problems`;
    super(`the bot package has ${count}:\n${sorted.map((p) => `  ${formatProblem(p)}`).join('\n')}`);
    this.name = 'PackageError';
    this.problems = sorted;
  }
}

/** Escapes one JSON pointer segment (RFC 6901). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function pointer(...segments: (string | number)[]): string {
  return segments.map((s) => `/${pointerSegment(s)}`).join('');
}
