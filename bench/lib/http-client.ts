import net from 'node:net';

export interface HttpAnswer {
  status: number;
  body: Buffer;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * One keep-alive HTTP/1.1 connection, one request at a time: what a closed-loop virtual client needs,
 * at a fraction of the client CPU of node:http (the load process must not be the bottleneck). It reads
 * `content-length` and chunked bodies; it reconnects when the server closed the connection.
 */
export class HttpConnection {
  private socket: net.Socket | undefined;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private pending:
    { resolve: (a: HttpAnswer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | undefined;
  private readonly hostHeader: string;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly timeoutMs = 15_000,
  ) {
    this.hostHeader = `${host}:${port}`;
  }

  static of(url: string, timeoutMs?: number): HttpConnection {
    const u = new URL(url);
    return new HttpConnection(u.hostname, Number(u.port || 80), timeoutMs);
  }

  /** `headers` are pre-formatted lines (`name: value\r\n`...). */
  request(method: string, path: string, headers: string, body?: string): Promise<HttpAnswer> {
    if (this.pending) return Promise.reject(new Error('one request at a time per connection'));
    const socket = this.connect();
    const length = body === undefined ? 0 : Buffer.byteLength(body);
    const head =
      `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n${headers}` +
      (body === undefined ? '' : `content-type: application/json\r\ncontent-length: ${length}\r\n`) +
      '\r\n';
    return new Promise<HttpAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`${method} ${path}: no answer in ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending = { resolve, reject, timer };
      socket.write(body === undefined ? head : head + body);
    });
  }

  async json(
    method: string,
    path: string,
    headers: string,
    body?: unknown,
  ): Promise<HttpAnswer & { json: unknown }> {
    const answer = await this.request(
      method,
      path,
      headers,
      body === undefined ? undefined : JSON.stringify(body),
    );
    const text = answer.body.toString();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: the text
    }
    return { ...answer, json };
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private connect(): net.Socket {
    if (this.socket && !this.socket.destroyed) return this.socket;
    this.chunks = [];
    this.buffered = 0;
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.parse();
    });
    const gone = (err?: Error) => {
      if (this.socket === socket) this.socket = undefined;
      this.fail(err ?? new Error('the server closed the connection'));
    };
    socket.on('error', gone);
    socket.on('close', () => gone());
    this.socket = socket;
    return socket;
  }

  private fail(err: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    this.close();
    p.reject(err);
  }

  private parse(): void {
    if (!this.pending) return;
    const data =
      this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [data];
    const headEnd = data.indexOf(CRLF2);
    if (headEnd < 0) return;
    const head = data.toString('latin1', 0, headEnd);
    const status = Number(head.slice(9, 12));
    const lower = head.toLowerCase();
    let body: Buffer;
    let consumed: number;
    const lengthAt = lower.indexOf('\r\ncontent-length:');
    if (lengthAt >= 0) {
      const length = parseInt(lower.slice(lengthAt + 17), 10);
      if (data.length < headEnd + 4 + length) return;
      body = data.subarray(headEnd + 4, headEnd + 4 + length);
      consumed = headEnd + 4 + length;
    } else if (lower.includes('\r\ntransfer-encoding: chunked')) {
      const parts: Buffer[] = [];
      let at = headEnd + 4;
      for (;;) {
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd < 0) return;
        const size = parseInt(data.toString('latin1', at, lineEnd), 16);
        if (data.length < lineEnd + 2 + size + 2) return;
        if (size === 0) {
          consumed = lineEnd + 4;
          break;
        }
        parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      body = Buffer.alloc(0);
      consumed = headEnd + 4;
    }
    const rest = data.subarray(consumed);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    const p = this.pending;
    this.pending = undefined;
    clearTimeout(p.timer);
    if (lower.includes('\r\nconnection: close')) this.close();
    p.resolve({ status, body });
  }
}
