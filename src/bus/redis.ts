import { Redis } from 'ioredis';
import type { FrameLoader } from './remote.ts';
import { RemoteBus } from './remote.ts';

const CHANNEL = 'parley:signals';

/** Live signals between processes through Redis pub/sub. */
export class RedisBus extends RemoteBus {
  private constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    loadFrame: FrameLoader,
    onError: (err: unknown) => void,
  ) {
    // Redis carries large messages well; only exceptional frames are read back from the store.
    super(loadFrame, 512 * 1024, onError);
    subscriber.on('message', (_channel: string, text: string) => void this.receive(text));
  }

  static async connect(
    url: string,
    loadFrame: FrameLoader,
    onError: (err: unknown) => void,
  ): Promise<RedisBus> {
    const options = { lazyConnect: true, maxRetriesPerRequest: 3 };
    const publisher = new Redis(url, options);
    const subscriber = new Redis(url, options);
    publisher.on('error', onError);
    subscriber.on('error', onError);
    try {
      await publisher.connect();
      await subscriber.connect();
      await subscriber.subscribe(CHANNEL);
    } catch (err) {
      publisher.disconnect();
      subscriber.disconnect();
      throw new Error(`Redis at ${redacted(url)} is unreachable: ${(err as Error).message}`);
    }
    return new RedisBus(publisher, subscriber, loadFrame, onError);
  }

  protected send(text: string): void {
    this.publisher.publish(CHANNEL, text).catch(this.onError);
  }

  override async close(): Promise<void> {
    await super.close();
    this.subscriber.disconnect();
    // Closing: a connection that is already gone has nothing left to close.
    await this.publisher.quit().catch(() => {});
  }
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
