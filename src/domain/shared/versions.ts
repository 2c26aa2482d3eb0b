// Semantic versions as the hub's lookups read them: `bp add x` asks for `latest`, a definition for an
// exact version, and a plugin's dependency for a range (the SDK's `allWithinMajorOf` writes
// `>=2.0.0 <3.0.0`). Pure: no store.

interface Version {
  core: [number, number, number];
  /** Pre-release identifiers (`1.0.0-beta.2`: `beta`, `2`); empty for a release. */
  pre: string[];
}

/** What `latest` asks for: the highest version by semver's order. */
export const LATEST = 'latest';

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function parse(text: string): Version | undefined {
  const m = VERSION.exec(text.trim());
  if (!m) return undefined;
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : [] };
}

function comparePre(a: string[], b: string[]): number {
  // A release ranks above its pre-releases.
  if (a.length === 0 || b.length === 0) return b.length - a.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const [x, y] = [a[i], b[i]];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const [nx, ny] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (nx && ny) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function compare(a: Version, b: Version): number {
  const [a0, a1, a2] = a.core;
  const [b0, b1, b2] = b.core;
  return a0 - b0 || a1 - b1 || a2 - b2 || comparePre(a.pre, b.pre);
}

/** Orders two versions by semver (text that is no version ranks below every version). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parse(a), parse(b)];
  if (!x || !y) return x ? 1 : y ? -1 : 0;
  return compare(x, y);
}

type Test = (v: Version) => boolean;

const at = (major: number, minor: number, patch: number): Version => ({
  core: [major, minor, patch],
  pre: [],
});

/** One comparator of a range (`>=1.2.0`, `<2`, `^1.2.3`, `~1.2`, `1.x`, `*`), or undefined if it is none. */
function comparator(text: string): Test | undefined {
  const m =
    /^(>=|<=|>|<|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?$/.exec(text);
  if (!m) return undefined;
  const op = m[1] ?? '=';
  const parts = [m[2], m[3], m[4]].map((p) => (p === undefined || /^[xX*]$/.test(p) ? undefined : Number(p)));
  const given = parts.findIndex((p) => p === undefined);
  const known = given === -1 ? 3 : given;
  const [major = 0, minor = 0, patch = 0] = parts;
  const low: Version = { core: [major, minor, patch], pre: m[5] ? m[5].split('.') : [] };
  // The first version past what a partial version covers (`1.2` covers 1.2.x: up to 1.3.0).
  const next =
    known === 0
      ? undefined
      : known === 1
        ? at(major + 1, 0, 0)
        : known === 2
          ? at(major, minor + 1, 0)
          : undefined;
  const within = (v: Version) =>
    compare(v, low) >= 0 &&
    (next === undefined ? known === 0 || compare(v, low) === 0 : compare(v, next) < 0);
  switch (op) {
    case '=':
      return within;
    case '>=':
      return (v) => compare(v, low) >= 0;
    case '<':
      return (v) => compare(v, low) < 0;
    case '>':
      return next ? (v) => compare(v, next) >= 0 : (v) => compare(v, low) > 0;
    case '<=':
      return next ? (v) => compare(v, next) < 0 : (v) => compare(v, low) <= 0;
    case '~': {
      const end = known >= 2 ? at(major, minor + 1, 0) : at(major + 1, 0, 0);
      return (v) => compare(v, low) >= 0 && compare(v, end) < 0;
    }
    default: {
      // `^`: what does not change the left-most non-zero part.
      const end =
        major > 0 || known < 2
          ? at(major + 1, 0, 0)
          : minor > 0 || known < 3
            ? at(0, minor + 1, 0)
            : at(0, 0, patch + 1);
      return (v) => compare(v, low) >= 0 && compare(v, end) < 0;
    }
  }
}

/** What a wanted version accepts: `latest`, an exact version, or a range (`a b` both, `a || b` either). */
function accepts(wanted: string): Test | undefined {
  if (wanted.trim() === LATEST) return () => true;
  const alternatives: Test[][] = [];
  for (const alternative of wanted.split('||')) {
    const tests: Test[] = [];
    for (const part of alternative.trim().split(/\s+/).filter(Boolean)) {
      const test = comparator(part);
      if (!test) return undefined;
      tests.push(test);
    }
    if (tests.length === 0) return undefined;
    alternatives.push(tests);
  }
  return (v) => alternatives.some((tests) => tests.every((t) => t(v)));
}

/**
 * Of the candidates, the one a lookup by `wanted` answers: the one of exactly that version, else the
 * highest that `latest` or the range accepts; undefined when none does (or `wanted` is no version).
 */
export function resolveVersion<T extends { version: string }>(
  candidates: readonly T[],
  wanted: string,
): T | undefined {
  const exact = candidates.find((c) => c.version === wanted);
  if (exact) return exact;
  const test = accepts(wanted);
  if (!test) return undefined;
  let best: { item: T; version: Version } | undefined;
  for (const item of candidates) {
    const version = parse(item.version);
    if (version && test(version) && (!best || compare(version, best.version) > 0)) best = { item, version };
  }
  return best?.item;
}
