// Semantic versions as the hub's lookups read them: `bp add x` asks for `latest`, a definition for an
// exact version, and a plugin's dependency for a range (the SDK's `allWithinMajorOf` writes
// `>=2.0.0 <3.0.0`). Ranges are npm's (the `semver` package), which is what the SDK and CLI mean.
import semver from 'semver';

/** What `latest` asks for: the highest version by semver's order. */
export const LATEST = 'latest';

/**
 * Of the candidates, the one a lookup by `wanted` answers: the one of exactly that version, else the
 * highest that `latest` or the range accepts (a release before a pre-release); undefined when none does (or `wanted` is no version).
 */
export function resolveVersion<T extends { version: string }>(
  candidates: readonly T[],
  wanted: string,
): T | undefined {
  const exact = candidates.find((c) => c.version === wanted);
  if (exact) return exact;
  const range = wanted.trim() === LATEST ? '*' : semver.validRange(wanted);
  if (range === null) return undefined;
  const versions = candidates.map((c) => c.version).filter((v) => semver.valid(v) !== null);
  // `latest` is the highest release; a pre-release only when there is nothing else.
  const best =
    semver.maxSatisfying(versions, range) ??
    (wanted.trim() === LATEST ? semver.maxSatisfying(versions, range, { includePrerelease: true }) : null);
  return best === null ? undefined : candidates.find((c) => c.version === best);
}
