import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { BusRejection } from './rejections.ts';

/** What every sealed message starts with: a message of another format, or of none, is not read. */
const VERSION = 'v1.';
/** An HMAC-SHA256 in base64url, without padding. */
const MAC_CHARS = 43;
const MAC_END = VERSION.length + MAC_CHARS;
const DOT = '.'.charCodeAt(0);

/**
 * The secret one deployment's processes share for their bus, and what is derived from it: the name of
 * the channel they talk on, and the key that signs what they say. Each message is `v1.<mac>.<body>`,
 * the mac an HMAC-SHA256 of the body: signed, not encrypted.
 */
export class BusSeal {
  /** Part of the transport's channel name: without the secret, the channel cannot be guessed. */
  readonly channelId: string;
  /** Imported once: a key object spares each message the key's setup. */
  private readonly key: KeyObject;

  constructor(secret: string) {
    // Two values from one secret, each for its one use: the channel's name is seen by whoever sees the
    // traffic, and must tell nothing of the signing key.
    this.channelId = derive(secret, 'parley live bus: channel').toString('hex').slice(0, 32);
    this.key = createSecretKey(derive(secret, 'parley live bus: signatures'));
  }

  seal(body: string): string {
    return `${VERSION}${this.mac(body).toString('base64url')}.${body}`;
  }

  /** The body of a message this secret sealed, or why it is not one. */
  open(text: string): { body: string } | { rejected: BusRejection } {
    if (!text.startsWith(VERSION) || text.charCodeAt(MAC_END) !== DOT) return { rejected: 'unsigned' };
    const given = Buffer.from(text.slice(VERSION.length, MAC_END), 'base64url');
    const body = text.slice(MAC_END + 1);
    const expected = this.mac(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { rejected: 'forged' };
    return { body };
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest();
  }
}

function derive(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(purpose).digest();
}
