/** Words that say nothing about what is searched for (Postgres' English configuration drops the same). */
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below
  between both but by can could did do does doing down during each few for from further had has have
  having he her here hers herself him himself his how i if in into is it its itself just me more most
  my myself no nor not now of off on once only or other our ours ourselves out over own same she should
  so some such than that the their theirs them themselves then there these they this those through to
  too under until up very was we were what when where which while who whom why will with would you your
  yours yourself yourselves`.split(/\s+/),
);

/** More terms than this in one query are dropped: a pasted page must not make a huge query. */
export const MAX_QUERY_TERMS = 32;

/**
 * The terms of a query: its words (letters and digits of any script, lower-cased), without the stop
 * words unless nothing else is left, each once. Only these reach the engines' query languages, so no
 * user text is ever parsed as query syntax.
 */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const meaningful = words.filter((w) => !STOP_WORDS.has(w));
  return [...new Set(meaningful.length > 0 ? meaningful : words)].slice(0, MAX_QUERY_TERMS);
}
