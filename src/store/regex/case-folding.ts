import { RE2JS } from 're2js';
import { inRanges, normalRanges } from './ranges.ts';
import type { Range } from './syntax.ts';

/**
 * Case folding as RE2 does it under `$options: "i"`: a letter matches every letter of its orbit (the
 * letters Unicode's simple case folding makes equal: k, K and the Kelvin sign K). Postgres is given
 * the orbits written out (dialects/postgres/regex-pattern.ts), so both stores fold alike, whatever
 * Postgres's locale.
 *
 * The orbits are found once, when first needed (tens of milliseconds): the letters whose case changes
 * (none lies past U+1FFFF) are joined with their one-letter lower and upper cases, and with the letters
 * of the same upper case ("ﬅ" and "ﬆ" are both "ST"); a set of more than two is split by asking RE2
 * which of them it folds together (ı and İ fold with neither i nor I).
 */

/** Past this no letter changes case (Unicode 17: Adlam, U+1E900–U+1E943). */
const LAST_CASED_BLOCK = 0x1ff00;
const BLOCK = 256;
const CASED = /[\p{Changes_When_Casemapped}\p{Changes_When_Casefolded}]/u;

let orbits: Map<number, readonly number[]> | undefined;

/** Each code point whose case folds, to its orbit (itself included, in order). */
function caseOrbits(): Map<number, readonly number[]> {
  if (orbits) return orbits;
  const sets = new Sets();
  const byUpper = new Map<string, number>();
  for (let block = 0; block <= LAST_CASED_BLOCK; block += BLOCK) {
    // Surrogates are no characters, and most blocks hold no cased letter: one test skips them.
    if (block >= 0xd800 && block < 0xe000) continue;
    const codePoints = Array.from({ length: BLOCK }, (_, i) => block + i);
    if (!CASED.test(String.fromCodePoint(...codePoints))) continue;
    for (const c of codePoints) {
      const char = String.fromCodePoint(c);
      if (!CASED.test(char)) continue;
      sets.add(c);
      for (const mapped of [char.toLowerCase(), char.toUpperCase()]) {
        const single = singleCodePoint(mapped);
        if (single !== undefined) sets.join(c, single);
      }
      const upper = char.toUpperCase();
      const sameUpper = byUpper.get(upper);
      if (sameUpper === undefined) byUpper.set(upper, c);
      else sets.join(c, sameUpper);
    }
  }
  const found = new Map<number, readonly number[]>();
  for (const members of sets.groups()) {
    for (const orbit of members.length > 2 ? splitByRe2(members) : [members]) {
      if (orbit.length < 2) continue;
      const sorted = [...orbit].sort((a, b) => a - b);
      for (const c of sorted) found.set(c, sorted);
    }
  }
  orbits = found;
  return found;
}

function singleCodePoint(text: string): number | undefined {
  const first = text.codePointAt(0);
  return first !== undefined && String.fromCodePoint(first) === text ? first : undefined;
}

/** The orbits of a set of letters, as RE2 folds them. */
function splitByRe2(members: readonly number[]): number[][] {
  const left = new Set(members);
  const out: number[][] = [];
  for (const c of members) {
    if (!left.has(c)) continue;
    const folded = RE2JS.compile(RE2JS.quote(String.fromCodePoint(c)), RE2JS.CASE_INSENSITIVE);
    const orbit = [...left].filter((other) => folded.testExact(String.fromCodePoint(other)));
    orbit.forEach((other) => left.delete(other));
    out.push(orbit);
  }
  return out;
}

/** The orbit of one code point (itself alone when its case does not fold). */
export function caseOrbit(codePoint: number): readonly number[] {
  return caseOrbits().get(codePoint) ?? [codePoint];
}

/** `ranges` with every code point that folds to one of theirs. */
export function foldedRanges(ranges: readonly Range[]): Range[] {
  const normal = normalRanges(ranges);
  const added: Range[] = [];
  for (const [c, orbit] of caseOrbits()) {
    if (inRanges(normal, c)) for (const other of orbit) added.push([other, other]);
  }
  return normalRanges([...normal, ...added]);
}

/** Disjoint sets of code points (union–find). */
class Sets {
  private readonly parent = new Map<number, number>();

  add(c: number): void {
    if (!this.parent.has(c)) this.parent.set(c, c);
  }

  private root(c: number): number {
    let at = c;
    for (let up = this.parent.get(at); up !== undefined && up !== at; up = this.parent.get(at)) at = up;
    return at;
  }

  join(a: number, b: number): void {
    this.add(a);
    this.add(b);
    const ra = this.root(a);
    const rb = this.root(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }

  groups(): number[][] {
    const byRoot = new Map<number, number[]>();
    for (const c of this.parent.keys()) {
      const root = this.root(c);
      const group = byRoot.get(root);
      if (group) group.push(c);
      else byRoot.set(root, [c]);
    }
    return [...byRoot.values()];
  }
}
