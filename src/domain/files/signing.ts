import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Settings } from '../shared/settings.ts';

const SECRET_SETTING = 'files.url_signing_secret';

/**
 * Signs the URLs the Files API hands out (upload and download), so they authorize themselves: an
 * HMAC-SHA256 of what the URL may do and until when, with a secret generated once and kept in the
 * store (every process of a deployment signs and checks alike, and restarts keep URLs valid).
 */
export class UrlSigner {
  private secret: Promise<Buffer> | undefined;

  constructor(private readonly settings: Settings) {}

  private key(): Promise<Buffer> {
    this.secret ??= this.settings
      .generatedSecret(SECRET_SETTING)
      .then((secret) => Buffer.from(secret, 'base64url'));
    this.secret.catch(() => (this.secret = undefined));
    return this.secret;
  }

  /** The signature of `parts` (what is allowed) until `expires` (seconds since the epoch). */
  async sign(parts: string[], expires: number): Promise<string> {
    return createHmac('sha256', await this.key())
      .update([...parts, String(expires)].join('\n'))
      .digest('base64url');
  }

  /** True when `signature` signs `parts` until `expires`, and that time has not passed. */
  async verify(parts: string[], expires: number, signature: string): Promise<boolean> {
    if (!Number.isInteger(expires) || expires * 1000 < Date.now()) return false;
    const expected = Buffer.from(await this.sign(parts, expires));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
