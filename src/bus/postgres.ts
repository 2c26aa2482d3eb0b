import pg from 'pg';
import type { BusHooks, FrameLoader } from './remote.ts';
import { RemoteBus } from './remote.ts';
import type { BusSeal } from './signing.ts';

/** A NOTIFY payload must be shorter than 8000 bytes (Postgres' limit, in the server's encoding: UTF-8). */
const MAX_NOTIFY_PAYLOAD_BYTES = 7999;

/**
 * The deployment's channel: named from its secret. Postgres lists a session's channels only to that
 * session, so another user of the database, who may NOTIFY and LISTEN on any channel, cannot find it.
 */
export function postgresChannel(seal: BusSeal): string {
  // Lower-case hex: an identifier as is, with no quoting.
  return `parley_signals_${seal.channelId}`;
}

/** Live signals between processes through Postgres LISTEN/NOTIFY, when no Redis is configured. */
export class PostgresBus extends RemoteBus {
  private closed = false;

  private constructor(
    private readonly url: string,
    private readonly channel: string,
    private listener: pg.Client,
    private readonly notifier: pg.Pool,
    seal: BusSeal,
    loadFrame: FrameLoader,
    hooks: BusHooks,
  ) {
    super(seal, loadFrame, MAX_NOTIFY_PAYLOAD_BYTES, hooks);
    this.attach(listener);
  }

  static async connect(
    url: string,
    seal: BusSeal,
    loadFrame: FrameLoader,
    hooks: BusHooks,
  ): Promise<PostgresBus> {
    const channel = postgresChannel(seal);
    const listener = await PostgresBus.listen(url, channel);
    const notifier = new pg.Pool({ connectionString: url, max: 2 });
    notifier.on('error', hooks.onError);
    return new PostgresBus(url, channel, listener, notifier, seal, loadFrame, hooks);
  }

  private static async listen(url: string, channel: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    // Until `attach` takes over, an error of the new connection fails the connect or the query below.
    const early = () => {};
    client.on('error', early);
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
    } catch (err) {
      // The connection that failed to start is let go; its own failure is the one to report.
      await client.end().catch(() => {});
      throw err;
    } finally {
      client.removeListener('error', early);
    }
    return client;
  }

  private attach(client: pg.Client): void {
    client.on('notification', (n) => {
      if (n.channel === this.channel && n.payload) void this.receive(n.payload);
    });
    // A lost listening connection is replaced; signals sent meanwhile are recovered by listeners from the log.
    let lost = false;
    client.on('error', (err) => {
      this.onError(err);
      // A connection may report more than one error as it goes: it is replaced once.
      if (lost) return;
      lost = true;
      void this.reconnect();
    });
  }

  private async reconnect(): Promise<void> {
    while (!this.closed) {
      try {
        this.listener = await PostgresBus.listen(this.url, this.channel);
        this.attach(this.listener);
        return;
      } catch (err) {
        this.onError(err);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  protected send(text: string): void {
    this.notifier.query('select pg_notify($1, $2)', [this.channel, text]).catch(this.onError);
  }

  override async close(): Promise<void> {
    this.closed = true;
    await super.close();
    // Closing: a connection that is already gone has nothing left to close.
    await this.listener.end().catch(() => {});
    await this.notifier.end().catch(() => {});
  }
}
