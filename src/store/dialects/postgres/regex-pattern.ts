import { caseOrbit, foldedRanges } from '../../regex/case-folding.ts';
import { complementRanges, normalRanges, withoutRanges } from '../../regex/ranges.ts';
import type { ClassItem, Range, RegexNode } from '../../regex/syntax.ts';

/**
 * A parsed pattern (syntax.ts) written as a Postgres regular expression that matches the same texts as
 * RE2 does the original: each class as the code points RE2 gives it (`\w`, `[[:alpha:]]` are ASCII in
 * RE2, the locale's in Postgres), each letter under `$options: "i"` as its case orbit, `.` as "no
 * newline", `\b` as the look-arounds of an ASCII word boundary, and groups as non-capturing groups.
 * Postgres runs it with `~`, case-sensitive, so its collation and locale play no part.
 */
export function postgresPattern(tree: RegexNode, ignoreCase: boolean): string {
  return new Writer(ignoreCase).write(tree);
}

/** Postgres's texts hold neither NUL nor surrogates: a class naming them would be refused. */
const NOT_IN_TEXT: Range[] = [
  [0, 0],
  [0xd800, 0xdfff],
];
const WORD = '[0-9A-Za-z_]';
/** Matches nothing: an empty negative look-ahead. */
const NOTHING = '(?!)';

class Writer {
  constructor(private readonly ignoreCase: boolean) {}

  write(node: RegexNode): string {
    switch (node.kind) {
      case 'empty':
        return '';
      case 'literal':
        return this.ignoreCase && caseOrbit(node.codePoint).length > 1
          ? bracket([[node.codePoint, node.codePoint]], this.ignoreCase)
          : character(node.codePoint);
      case 'class':
        return bracket(this.classRanges(node.items, node.negated), false);
      case 'notNewline':
        return '[^\\n]';
      case 'textStart':
        return '^';
      case 'textEnd':
        return '$';
      case 'wordBoundary':
        return node.negated
          ? `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD}))`
          : `(?:(?<=${WORD})(?!${WORD})|(?<!${WORD})(?=${WORD}))`;
      case 'group':
        return `(?:${this.write(node.body)})`;
      case 'concat':
        return node.items.map((item) => this.write(item)).join('');
      case 'alternate':
        return node.options.map((option) => this.write(option)).join('|');
      case 'repeat':
        return `${this.write(node.body)}${quantifier(node.min, node.max)}`;
    }
  }

  /** A bracket expression's code points, as RE2 reads them: each item folded, then negated. */
  private classRanges(items: readonly ClassItem[], negated: boolean): Range[] {
    const ranges = items.flatMap((item) => {
      const folded = this.ignoreCase ? foldedRanges(item.ranges) : item.ranges;
      return item.negated ? complementRanges(folded) : folded;
    });
    return negated ? complementRanges(ranges) : normalRanges(ranges);
  }
}

function quantifier(min: number, max: number | undefined): string {
  if (max === undefined) return min === 0 ? '*' : min === 1 ? '+' : `{${min},}`;
  if (min === 0 && max === 1) return '?';
  return min === max ? `{${min}}` : `{${min},${max}}`;
}

function bracket(ranges: readonly Range[], fold: boolean): string {
  const members = withoutRanges(fold ? foldedRanges(ranges) : ranges, NOT_IN_TEXT);
  if (members.length === 0) return NOTHING;
  const body = members.map(([lo, hi]) => (lo === hi ? character(lo) : `${character(lo)}-${character(hi)}`));
  return `[${body.join('')}]`;
}

/** One character, as itself when a letter or digit of ASCII, else as an escape Postgres reads alike. */
function character(codePoint: number): string {
  if (/^[0-9A-Za-z]$/.test(String.fromCodePoint(codePoint))) return String.fromCodePoint(codePoint);
  const hex = codePoint.toString(16).toUpperCase();
  return codePoint <= 0xffff ? `\\u${hex.padStart(4, '0')}` : `\\U${hex.padStart(8, '0')}`;
}
