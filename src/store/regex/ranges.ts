import type { Range } from './syntax.ts';

/** The last code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** Ranges sorted, with the ones that overlap or touch merged. */
export function normalRanges(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out.at(-1);
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** The code points outside `ranges`. */
export function complementRanges(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of normalRanges(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** The ranges less the code points of `removed`. */
export function withoutRanges(ranges: readonly Range[], removed: readonly Range[]): Range[] {
  return complementRanges([...complementRanges(ranges), ...removed]);
}

/** Whether `codePoint` is in the (normal) ranges. */
export function inRanges(ranges: readonly Range[], codePoint: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [lo, hi] = ranges[middle] ?? [0, -1];
    if (codePoint < lo) high = middle - 1;
    else if (codePoint > hi) low = middle + 1;
    else return true;
  }
  return false;
}
