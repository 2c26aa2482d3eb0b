import { hash, randomBytes } from 'node:crypto';

/** Token kinds and their visible prefixes, so a leaked token says what it is. */
export const TOKEN_PREFIXES = {
  personalAccessToken: 'bp_pat_',
  botApiKey: 'bp_bak_',
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIXES;

/** 32 random bytes (256 bits) behind a readable prefix. The value is shown once and never stored. */
export function newToken(kind: TokenKind): string {
  return TOKEN_PREFIXES[kind] + randomBytes(32).toString('base64url');
}

/** Tokens are high-entropy, so a plain SHA-256 is the right hash: no salt or stretching is needed to resist guessing. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}
