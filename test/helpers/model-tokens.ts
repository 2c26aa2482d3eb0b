// How the test model server counts tokens: deterministic, so that a suite can predict `usage` and
// where `max_tokens` cuts. A token is a run of letters and digits, or one other character that is not
// whitespace ("Hello, world!" is four: `Hello` `,` `world` `!`). The whitespace before a token belongs
// to it, so the pieces of a text join back into the text exactly: streaming sends one piece a chunk.

const TOKEN = /\s*(?:[\p{L}\p{N}]+|[^\p{L}\p{N}\s])/gu;

/**
 * The text cut into tokens, each with the whitespace before it; whitespace at the end joins the last
 * piece (and a text of whitespace alone is one piece), so that `pieces.join('') === text`.
 */
export function tokenPieces(text: string): string[] {
  const pieces = text.match(TOKEN) ?? [];
  const trailing = text.slice(pieces.join('').length);
  if (trailing === '') return pieces;
  const last = pieces.pop();
  return [...pieces, (last ?? '') + trailing];
}

export function countTokens(text: string): number {
  return tokenPieces(text).length;
}

/** The first `limit` tokens of the text. */
export function firstTokens(text: string, limit: number): string {
  return tokenPieces(text).slice(0, limit).join('');
}
