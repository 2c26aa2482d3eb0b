import { Redis } from 'ioredis';
import { ConfigError } from '../config.ts';
import type { BusHooks, FrameLoader } from './remote.ts';
import { RemoteBus } from './remote.ts';
import type { BusSeal } from './signing.ts';

/** The deployment's channel: named from its secret, so that no other client of Redis finds it by name. */
export function redisChannel(seal: BusSeal): string {
  return `parley:signals:${seal.channelId}`;
}

/** Live signals between processes through Redis pub/sub. */
export class RedisBus extends RemoteBus {
  private constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
    seal: BusSeal,
    loadFrame: FrameLoader,
    hooks: BusHooks,
  ) {
    // Redis carries large messages well; only exceptional frames are read back from the store.
    super(seal, loadFrame, 512 * 1024, hooks);
    subscriber.on('message', (_channel: string, text: string) => void this.receive(text));
  }

  /**
   * Connects as the URL says: its user and password (Redis ACL, `redis://user:password@host`), TLS for
   * `rediss://`. Fails with what Redis answered, never with the password.
   */
  static async connect(
    url: string,
    seal: BusSeal,
    loadFrame: FrameLoader,
    hooks: BusHooks,
  ): Promise<RedisBus> {
    const options = { lazyConnect: true, maxRetriesPerRequest: 3 };
    const publisher = new Redis(url, options);
    const subscriber = new Redis(url, options);
    publisher.on('error', hooks.onError);
    subscriber.on('error', hooks.onError);
    // A refused login closes the connection: `connect` then fails with "Connection is closed", and
    // only the error event says why.
    let refusal: Error | undefined;
    const remember = (err: Error) => (refusal ??= err);
    publisher.on('error', remember);
    subscriber.on('error', remember);
    const channel = redisChannel(seal);
    try {
      await publisher.connect();
      await subscriber.connect();
      await subscriber.subscribe(channel);
    } catch (err) {
      publisher.disconnect();
      subscriber.disconnect();
      throw startFailure(url, refusal ?? (err as Error));
    } finally {
      publisher.off('error', remember);
      subscriber.off('error', remember);
    }
    return new RedisBus(publisher, subscriber, channel, seal, loadFrame, hooks);
  }

  protected send(text: string): void {
    this.publisher.publish(this.channel, text).catch(this.onError);
  }

  override async close(): Promise<void> {
    await super.close();
    this.subscriber.disconnect();
    // Closing: a connection that is already gone has nothing left to close.
    await this.publisher.quit().catch(() => {});
  }
}

/** Redis's answers that mean the URL's user, password or the user's rights are wrong (Redis ACL). */
const REFUSED = /^(WRONGPASS|NOAUTH|NOPERM)\b/;

/** Why the bus could not start, saying what Redis answered and where, without the URL's password. */
function startFailure(url: string, err: Error): Error {
  if (REFUSED.test(err.message)) {
    return new ConfigError(
      `Redis at ${redacted(url)} refused Parley: ${err.message} (check the user, password and rights that REDIS_URL gives)`,
    );
  }
  return new Error(`Redis at ${redacted(url)} is unreachable: ${err.message}`);
}

/** A URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured URL';
  }
}
