import pg from 'pg';
import type { FrameLoader } from './remote.ts';
import { RemoteBus } from './remote.ts';

const CHANNEL = 'parley_signals';
/** A NOTIFY payload must be shorter than 8000 bytes (Postgres' limit, in the server's encoding: UTF-8). */
const MAX_NOTIFY_PAYLOAD_BYTES = 7999;

/** Live signals between processes through Postgres LISTEN/NOTIFY, when no Redis is configured. */
export class PostgresBus extends RemoteBus {
  private closed = false;

  private constructor(
    private readonly url: string,
    private listener: pg.Client,
    private readonly notifier: pg.Pool,
    loadFrame: FrameLoader,
    onError: (err: unknown) => void,
  ) {
    super(loadFrame, MAX_NOTIFY_PAYLOAD_BYTES, onError);
    this.attach(listener);
  }

  static async connect(
    url: string,
    loadFrame: FrameLoader,
    onError: (err: unknown) => void,
  ): Promise<PostgresBus> {
    const listener = await PostgresBus.listen(url);
    const notifier = new pg.Pool({ connectionString: url, max: 2 });
    notifier.on('error', onError);
    return new PostgresBus(url, listener, notifier, loadFrame, onError);
  }

  private static async listen(url: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    // Until `attach` takes over, an error of the new connection fails the connect or the query below.
    const early = () => {};
    client.on('error', early);
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
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
      if (n.channel === CHANNEL && n.payload) void this.receive(n.payload);
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
        this.listener = await PostgresBus.listen(this.url);
        this.attach(this.listener);
        return;
      } catch (err) {
        this.onError(err);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  protected send(text: string): void {
    this.notifier.query('select pg_notify($1, $2)', [CHANNEL, text]).catch(this.onError);
  }

  override async close(): Promise<void> {
    this.closed = true;
    await super.close();
    // Closing: a connection that is already gone has nothing left to close.
    await this.listener.end().catch(() => {});
    await this.notifier.end().catch(() => {});
  }
}
