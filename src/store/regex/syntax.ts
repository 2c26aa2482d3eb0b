import { RE2JS } from 're2js';

/**
 * The `$regex` syntax Parley accepts (docs/tables.md): RE2's, less what Postgres cannot be made to
 * mean the same (look-arounds and back-references, which RE2 lacks too; Unicode classes; inline flags;
 * octal escapes; counts above 255). The pattern is parsed here, to refuse the rest the same way on both
 * stores and to write Postgres's version of it (dialects/postgres/regex-pattern.ts); RE2JS then compiles
 * it, which is what SQLite matches with (sqlite-functions.ts), so a pattern RE2 refuses is refused too.
 */

/** A range of code points, both ends included. */
export type Range = readonly [number, number];

/** One member of a bracket expression: ranges, or the code points outside them (`\W`, `[:^alpha:]`). */
export interface ClassItem {
  ranges: readonly Range[];
  negated: boolean;
}

export type RegexNode =
  | { kind: 'empty' }
  | { kind: 'literal'; codePoint: number }
  | { kind: 'class'; items: ClassItem[]; negated: boolean }
  /** `.`: any character but a newline. */
  | { kind: 'notNewline' }
  | { kind: 'textStart' }
  | { kind: 'textEnd' }
  | { kind: 'wordBoundary'; negated: boolean }
  | { kind: 'group'; body: RegexNode }
  | { kind: 'concat'; items: RegexNode[] }
  | { kind: 'alternate'; options: RegexNode[] }
  | { kind: 'repeat'; body: RegexNode; min: number; max: number | undefined };

/** A pattern outside the accepted syntax; the message says what and where. */
export class RegexSyntaxError extends Error {}

/** The largest count of `{n,m}` (Postgres's own limit; RE2's is 1,000). */
export const MAX_REPEAT_COUNT = 255;

const MAX_CODE_POINT = 0x10ffff;

const ascii = (text: string): Range[] => {
  const ranges: Range[] = [];
  for (const part of text.match(/.-.|./gsu) ?? []) {
    const lo = part.codePointAt(0) ?? 0;
    ranges.push([lo, part.length === 3 ? (part.codePointAt(2) ?? lo) : lo]);
  }
  return ranges;
};

/** RE2's Perl classes: ASCII only, whatever the text. */
const PERL_CLASSES: Record<string, Range[]> = {
  d: ascii('0-9'),
  s: ascii('\t\n\f\r '),
  w: ascii('0-9A-Za-z_'),
};

/** RE2's POSIX classes, `[[:alpha:]]`: ASCII only. */
const POSIX_CLASSES: Record<string, Range[]> = {
  alnum: ascii('0-9A-Za-z'),
  alpha: ascii('A-Za-z'),
  ascii: [[0, 0x7f]],
  blank: ascii('\t '),
  cntrl: [
    [0, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: ascii('0-9'),
  graph: ascii('!-~'),
  lower: ascii('a-z'),
  print: ascii(' -~'),
  punct: ascii('!-/:-@[-`{-~'),
  space: ascii('\t-\r '),
  upper: ascii('A-Z'),
  word: ascii('0-9A-Za-z_'),
  xdigit: ascii('0-9A-Fa-f'),
};

const SIMPLE_ESCAPES: Record<string, number> = { a: 0x07, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

const isAsciiAlnum = (c: number) =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isSurrogate = (c: number) => c >= 0xd800 && c <= 0xdfff;

/**
 * A pattern the syntax accepts, as each store's match takes it (`StoreSql.regexMatch`): its text, which
 * RE2JS compiles, and its tree, which is written for Postgres.
 */
export interface CheckedRegex {
  readonly pattern: string;
  /** `$options: "i"`. */
  readonly ignoreCase: boolean;
  readonly tree: RegexNode;
}

/** The pattern, checked; or a RegexSyntaxError saying what the syntax refuses. */
export function checkRegex(pattern: string, ignoreCase: boolean): CheckedRegex {
  return { pattern, ignoreCase, tree: parseRegex(pattern, ignoreCase) };
}

/**
 * The pattern's tree, or a RegexSyntaxError. `ignoreCase` is `$options: "i"`, which RE2 is also asked
 * to compile with.
 */
export function parseRegex(pattern: string, ignoreCase: boolean): RegexNode {
  const tree = new Parser(pattern).parse();
  try {
    RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new RegexSyntaxError(
      err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err),
    );
  }
  return tree;
}

class Parser {
  private readonly chars: number[];
  private at = 0;

  constructor(pattern: string) {
    this.chars = [...pattern].map((char) => char.codePointAt(0) ?? 0);
    if (this.chars.some(isSurrogate)) throw new RegexSyntaxError('the pattern is not well-formed Unicode');
  }

  parse(): RegexNode {
    const tree = this.alternation();
    if (this.at < this.chars.length) throw this.error('unmatched ")"');
    return tree;
  }

  private peek(offset = 0): string {
    const c = this.chars[this.at + offset];
    return c === undefined ? '' : String.fromCodePoint(c);
  }

  private next(): number {
    const c = this.chars[this.at++];
    if (c === undefined) throw this.error('the pattern ends too early');
    return c;
  }

  private error(message: string): RegexSyntaxError {
    return new RegexSyntaxError(`${message} (at character ${Math.min(this.at, this.chars.length) + 1})`);
  }

  private alternation(): RegexNode {
    const options = [this.concatenation()];
    while (this.peek() === '|') {
      this.at++;
      options.push(this.concatenation());
    }
    return options.length === 1 ? (options[0] ?? { kind: 'empty' }) : { kind: 'alternate', options };
  }

  private concatenation(): RegexNode {
    const items: RegexNode[] = [];
    let quantified = false;
    while (this.at < this.chars.length && this.peek() !== '|' && this.peek() !== ')') {
      const bounds = this.quantifier();
      if (bounds) {
        const last = items.pop();
        if (!last) throw this.error('a quantifier with nothing before it to repeat');
        if (quantified) throw this.error('a quantifier right after another (write a group: (?:a*)*)');
        if (last.kind === 'textStart' || last.kind === 'textEnd' || last.kind === 'wordBoundary') {
          throw this.error('a quantifier after an anchor repeats nothing');
        }
        items.push({ kind: 'repeat', body: last, ...bounds });
        quantified = true;
        continue;
      }
      items.push(...this.atom());
      quantified = false;
    }
    return items.length === 0
      ? { kind: 'empty' }
      : items.length === 1
        ? (items[0] ?? { kind: 'empty' })
        : { kind: 'concat', items };
  }

  /** `*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}` (each perhaps lazy, `*?`), or undefined. */
  private quantifier(): { min: number; max: number | undefined } | undefined {
    const c = this.peek();
    let bounds: { min: number; max: number | undefined } | undefined;
    if (c === '*') bounds = { min: 0, max: undefined };
    else if (c === '+') bounds = { min: 1, max: undefined };
    else if (c === '?') bounds = { min: 0, max: 1 };
    if (bounds) this.at++;
    else if (c === '{') bounds = this.counted();
    // Lazy or greedy matters to where a match is, not to whether there is one.
    if (bounds && this.peek() === '?') this.at++;
    return bounds;
  }

  /**
   * `{n}`, `{n,}`, `{n,m}`; anything else after `{` (a count with a leading zero too) makes it a plain
   * `{`, as in RE2.
   */
  private counted(): { min: number; max: number | undefined } | undefined {
    const rest = String.fromCodePoint(...this.chars.slice(this.at));
    const match = /^\{(0|[1-9]\d*)(,(0|[1-9]\d*)?)?\}/.exec(rest);
    if (!match) return undefined;
    const count = (digits: string) => (digits.length > 8 ? Infinity : Number(digits));
    const min = count(match[1] ?? '');
    const max = match[2] === undefined ? min : match[3] === undefined ? undefined : count(match[3]);
    if (min > MAX_REPEAT_COUNT || (max !== undefined && max > MAX_REPEAT_COUNT)) {
      throw this.error(`${match[0]}: counts go up to ${MAX_REPEAT_COUNT}`);
    }
    if (max !== undefined && max < min) throw this.error(`${match[0]} counts down`);
    this.at += match[0].length;
    return { min, max };
  }

  /** What follows: most often one node, none for an empty `\Q\E`, several for `\Q…\E`. */
  private atom(): RegexNode[] {
    const c = this.peek();
    switch (c) {
      case '(':
        return [this.group()];
      case '[':
        this.at++;
        return [this.bracket()];
      case '.':
        this.at++;
        return [{ kind: 'notNewline' }];
      case '^':
        this.at++;
        return [{ kind: 'textStart' }];
      case '$':
        this.at++;
        return [{ kind: 'textEnd' }];
      case '\\':
        this.at++;
        return this.escape();
      default:
        return [{ kind: 'literal', codePoint: this.next() }];
    }
  }

  private group(): RegexNode {
    this.at++;
    if (this.peek() === '?') {
      const head = String.fromCodePoint(...this.chars.slice(this.at, this.at + 4));
      if (head.startsWith('?:')) this.at += 2;
      else if (/^\?(=|!|<=|<!)/.test(head))
        throw this.error('look-arounds ((?=…), (?!…), (?<=…), (?<!…)) are not supported');
      else if (head.startsWith('?P=')) throw this.error('back-references are not supported');
      else if (head.startsWith('?P<') || head.startsWith('?<')) this.groupName();
      else
        throw this.error(
          'inline flags ((?i) and the like) are not supported: $options says whether case matters',
        );
    }
    const body = this.alternation();
    if (this.peek() !== ')') throw this.error('a "(" is not closed');
    this.at++;
    return { kind: 'group', body };
  }

  /** `?P<name>` or `?<name>`: a name, which changes nothing here (nothing is captured). */
  private groupName(): void {
    this.at += this.peek(1) === 'P' ? 3 : 2;
    const start = this.at;
    while (/^[A-Za-z0-9_]$/.test(this.peek())) this.at++;
    if (this.at === start || this.peek() !== '>')
      throw this.error('a group name is letters, digits and _, then ">"');
    this.at++;
  }

  /** After `\` outside brackets. */
  private escape(): RegexNode[] {
    const c = this.peek();
    switch (c) {
      case 'A':
        this.at++;
        return [{ kind: 'textStart' }];
      case 'z':
        this.at++;
        return [{ kind: 'textEnd' }];
      case 'b':
      case 'B':
        this.at++;
        return [{ kind: 'wordBoundary', negated: c === 'B' }];
      case 'Q': {
        this.at++;
        const literals: RegexNode[] = [];
        while (this.at < this.chars.length && !(this.peek() === '\\' && this.peek(1) === 'E')) {
          literals.push({ kind: 'literal', codePoint: this.next() });
        }
        if (this.at < this.chars.length) this.at += 2;
        return literals;
      }
      default: {
        const perl = this.perlClass();
        if (perl) return [{ kind: 'class', items: [perl], negated: false }];
        return [{ kind: 'literal', codePoint: this.escapedChar() }];
      }
    }
  }

  /** `\d \D \s \S \w \W` (after the `\`), or undefined. */
  private perlClass(): ClassItem | undefined {
    const c = this.peek();
    const ranges = PERL_CLASSES[c.toLowerCase()];
    if (!ranges) {
      if (c === 'p' || c === 'P') throw this.error('Unicode classes (\\p{…}) are not supported');
      return undefined;
    }
    this.at++;
    return { ranges, negated: c !== c.toLowerCase() };
  }

  /** The one character an escape stands for (after the `\`). */
  private escapedChar(): number {
    if (this.at >= this.chars.length) throw this.error('a "\\" ends the pattern');
    const c = this.next();
    const char = String.fromCodePoint(c);
    if (c < 0x80 && !isAsciiAlnum(c)) return c;
    const simple = SIMPLE_ESCAPES[char];
    if (simple !== undefined) return simple;
    if (/^[0-9]$/.test(char)) {
      throw this.error('back-references (\\1) and octal escapes are not supported (write \\x{…})');
    }
    if (char === 'x') return this.hexChar();
    throw this.error(`"\\${char}" is no escape this syntax knows`);
  }

  /** `\xHH` or `\x{H…}` (after the `\x`). */
  private hexChar(): number {
    const rest = String.fromCodePoint(...this.chars.slice(this.at));
    const match = /^(?:\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2}))/.exec(rest);
    if (!match) throw this.error('"\\x" takes two hexadecimal digits, or some in braces: \\x{1F600}');
    const value = parseInt(match[1] ?? match[2] ?? '', 16);
    if (value > MAX_CODE_POINT || isSurrogate(value)) throw this.error(`\\x${match[0]} is no character`);
    this.at += match[0].length;
    return value;
  }

  /** A bracket expression, after its `[`. */
  private bracket(): RegexNode {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const items: ClassItem[] = [];
    // A "]" first is itself (as in RE2): "[]a]".
    let first = true;
    for (;;) {
      if (this.at >= this.chars.length) throw this.error('a "[" is not closed');
      if (this.peek() === ']' && !first) break;
      first = false;
      const posix = this.posixClass();
      if (posix) {
        items.push(posix);
        continue;
      }
      if (this.peek() === '\\') {
        this.at++;
        const perl = this.perlClass();
        if (perl) {
          items.push(perl);
          continue;
        }
        this.at--;
      }
      const lo = this.bracketChar();
      let hi = lo;
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '') {
        this.at++;
        hi = this.bracketChar();
        if (hi < lo) throw this.error('a range in brackets runs backwards');
      }
      items.push({ ranges: [[lo, hi]], negated: false });
    }
    this.at++;
    return { kind: 'class', items, negated };
  }

  private bracketChar(): number {
    const c = this.next();
    if (c !== 0x5c) return c;
    return this.escapedChar();
  }

  /** `[:name:]` or `[:^name:]`, or undefined when the text there is no such class. */
  private posixClass(): ClassItem | undefined {
    if (this.peek() !== '[' || this.peek(1) !== ':') return undefined;
    const rest = String.fromCodePoint(...this.chars.slice(this.at, this.at + 16));
    const match = /^\[:(\^?)([a-z]*):\]/.exec(rest);
    if (!match) return undefined;
    const ranges = POSIX_CLASSES[match[2] ?? ''];
    if (!ranges) throw this.error(`${match[0]} is no class this syntax knows`);
    this.at += match[0].length;
    return { ranges, negated: match[1] === '^' };
  }
}
