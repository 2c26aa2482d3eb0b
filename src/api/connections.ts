import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ConnectionSettings } from '../config.ts';
import { HEADERS } from '../contract/headers.ts';
import { ApiError } from '../domain/shared/errors.ts';
import { addressKey } from './client-address.ts';
import type { ProxyTrust } from './client-address.ts';
import type { ErrorType } from '../domain/shared/error-types.ts';

/** The settings, with the number of connections worked out (see `descriptors.ts`). */
export type ConnectionLimits = Omit<ConnectionSettings, 'maxConnections'> & { maxConnections: number };

export type RefusalReason = 'address_limit' | 'total_limit' | 'slow_headers' | 'slow_body';

/** How often Node looks for late headers: its default (30 s) would let them be late by that much more. */
const CHECK_INTERVAL_MS = 1000;

/** How often refusals are told in the log: an attack makes thousands, one line a minute says enough. */
const REPORT_INTERVAL_MS = 60_000;

/** Connections refused or cut: counted for `/metrics`, and told in the log at most once a minute. */
export class Refusals {
  private readonly counts = new Map<RefusalReason, number>();

  constructor(private readonly metric: { labels(reason: RefusalReason): { inc(): void } }) {}

  readonly count = (reason: RefusalReason): void => {
    this.metric.labels(reason).inc();
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
  };

  /** Writes the counts of each minute that had any to `log`, until the app closes. */
  reportTo(app: FastifyInstance): void {
    const report = (log: FastifyBaseLogger) => {
      if (this.counts.size === 0) return;
      log.warn(
        { refused: Object.fromEntries(this.counts) },
        'connections were refused or cut (see PARLEY_MAX_CONNECTIONS* and the timeouts)',
      );
      this.counts.clear();
    };
    const timer = setInterval(() => report(app.log), REPORT_INTERVAL_MS).unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      report(app.log);
    });
  }
}

/**
 * Answers on a socket that no reply holds (a request whose headers did not come whole in time, or one
 * cut off) and closes it: the `{ id, code, type, message }` body with `status`, then the end.
 */
export function refuseOnSocket(socket: Socket, status: number, type: ErrorType, message: string): void {
  if (socket.writable) {
    const body = JSON.stringify({ ...new ApiError(type, message).toBody(), code: status });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Fastify's options for its HTTP server: headers within their timeout (checked every second), the idle
 * timeout of connections, and the documented error body for requests Node refuses before Fastify sees
 * them (late headers, headers too large, not HTTP). A request's body is bounded by `watchBodies`.
 */
export function serverOptions(
  limits: ConnectionLimits,
  refused: (reason: RefusalReason) => void,
): {
  http: ServerOptions;
  requestTimeout: number;
  connectionTimeout: number;
  clientErrorHandler: (err: ConnectionError, socket: Socket) => void;
} {
  return {
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: CHECK_INTERVAL_MS },
    // Node's request timeout bounds the whole request, a file's upload too: the body watchdog does instead.
    requestTimeout: 0,
    connectionTimeout: limits.idleTimeoutMs,
    clientErrorHandler: (err, socket) => {
      // A connection reset is over already.
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0) {
        // Nothing was asked on it (a browser opens connections ahead of need): closed like an idle one.
        socket.destroy();
      } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        refused('slow_headers');
        refuseOnSocket(socket, 408, 'OperationTimeout', 'The request’s headers did not arrive in time');
      } else if (err.code === 'HPE_HEADER_OVERFLOW') {
        refuseOnSocket(socket, 431, 'PayloadTooLarge', 'The request’s headers are too large');
      } else {
        refuseOnSocket(socket, 400, 'InvalidPayload', 'The request is not valid HTTP');
      }
    },
  };
}

/** Counts per client address, which forget an address once its count is back to zero. */
class OpenCounts {
  private readonly counts = new Map<string, number>();

  /** Counts one more for `key` unless it holds `max` already; whether it did. */
  take(key: string, max: number): boolean {
    const count = this.counts.get(key) ?? 0;
    if (count >= max) return false;
    this.counts.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = (this.counts.get(key) ?? 1) - 1;
    if (count <= 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }
}

/**
 * Bounds the connections of `app`'s server: as many as the limit in all (Node closes those past it as it
 * accepts them), as many from one client address (closed as they are accepted), and a connection idle
 * past its timeout is closed unless the server is still preparing its answer. Behind a trusted proxy,
 * whose connections carry many clients, each client address may have as many requests in progress,
 * and the proxy's own connections count in the total only.
 */
export function boundConnections(
  app: FastifyInstance,
  limits: ConnectionLimits,
  trust: ProxyTrust | undefined,
  refused: (reason: RefusalReason) => void,
): void {
  const server = app.server;
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => refused('total_limit'));

  const viaProxy = (socket: Socket): boolean =>
    trust !== undefined && socket.remoteAddress !== undefined && trust(socket.remoteAddress, 0);

  const openConnections = new OpenCounts();
  // After Node's own listener: the socket is the server's, and closing it frees what that set up.
  server.on('connection', (socket: Socket) => {
    if (socket.remoteAddress === undefined || viaProxy(socket)) return;
    const key = addressKey(socket.remoteAddress);
    if (!openConnections.take(key, limits.maxConnectionsPerAddress)) {
      refused('address_limit');
      socket.destroy();
      return;
    }
    socket.once('close', () => openConnections.release(key));
  });

  if (trust) {
    const inProgress = new OpenCounts();
    app.addHook('onRequest', async (request, reply) => {
      const socket = request.raw.socket;
      if (!viaProxy(socket)) return;
      const key = addressKey(request.ip);
      if (!inProgress.take(key, limits.maxConnectionsPerAddress)) {
        reply.header(HEADERS.retryAfter, '1');
        throw new ApiError(
          'RateLimited',
          `Too many requests in progress from this address: at most ${limits.maxConnectionsPerAddress} at once`,
        );
      }
      // The answer's end, or the connection's (a WebSocket's answer never ends by itself).
      const release = () => {
        reply.raw.off('close', release);
        socket.off('close', release);
        inProgress.release(key);
      };
      reply.raw.once('close', release);
      socket.once('close', release);
    });
  }

  // The answer in progress on each connection, so that a connection idle while it is prepared stays open.
  const answering = new WeakMap<Socket, ServerResponse<IncomingMessage>>();
  app.addHook('onRequest', async (request, reply) => {
    answering.set(request.raw.socket, reply.raw);
  });
  server.on('timeout', (socket: Socket) => {
    const answer = answering.get(socket);
    if (answer && !answer.headersSent && !answer.writableEnded) {
      // Nothing moves because the server is at its answer (its own limits bound that) or the body is
      // still coming (`watchBodies` bounds that): look again after another while.
      socket.setTimeout(limits.idleTimeoutMs);
      return;
    }
    socket.destroy();
  });
}
