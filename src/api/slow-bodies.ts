import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refuseOnSocket } from './connections.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The body may take longer than the body timeout (a file's upload, which a slow but steady client
     * may take minutes to send): only the minimum rate bounds it.
     */
    longBody?: boolean;
  }
}

export interface BodyLimits {
  /** The head start of a body, before the rate counts. */
  graceMs: number;
  /** The longest a body may take, but on routes of `longBody`. */
  timeoutMs: number;
  /** What a body must keep up on average since its headers came, after the head start. */
  minBytesPerSecond: number;
}

/** How often the bodies in progress are looked at: one timer for them all, the bounds are in seconds. */
const TICK_MS = 1000;

interface BodyInProgress {
  request: FastifyRequest;
  reply: FastifyReply;
  startedAt: number;
  bytesBefore: number;
  /** Time the server itself held bytes it had not read yet: no fault of the client's. */
  excusedMs: number;
  lastLook: number;
  longBody: boolean;
}

/** Whether a request has a body to come (a request without one is complete once its headers are). */
function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Bounds how a request body arrives: it must keep up `minBytesPerSecond` on average (counted in the
 * bytes its connection received since its headers came), after a head start of `graceMs`, and arrive
 * whole within `timeoutMs` unless its route says `longBody`. A body that falls behind is cut: 408 with
 * the error body when nothing was answered yet, and the connection is closed (so is one whose answer
 * was sent while its body still trickled in). Time the server itself keeps unread bytes waiting does
 * not count against the client.
 */
export function watchBodies(
  app: FastifyInstance,
  limits: BodyLimits,
  cut: (request: FastifyRequest, why: 'slow' | 'long') => void,
): void {
  const inProgress = new Set<BodyInProgress>();

  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw;
    if (!hasBody(raw) || raw.complete) return;
    const now = performance.now();
    const body: BodyInProgress = {
      request,
      reply,
      startedAt: now,
      bytesBefore: raw.socket.bytesRead,
      excusedMs: 0,
      lastLook: now,
      longBody: request.routeOptions.config.longBody === true,
    };
    // The first bytes of the body may have come with the headers: once the parser has had them (it is
    // still at the headers' read when this runs within it), they wait unread in the request, as nothing
    // reads a body before the onRequest hooks are done.
    queueMicrotask(() => (body.bytesBefore = raw.socket.bytesRead - raw.readableLength));
    inProgress.add(body);
  });

  const look = () => {
    const now = performance.now();
    for (const body of inProgress) {
      const raw = body.request.raw;
      if (raw.complete || raw.socket.destroyed) {
        inProgress.delete(body);
        continue;
      }
      if (raw.readableLength > 0) body.excusedMs += now - body.lastLook;
      body.lastLook = now;
      const elapsedMs = now - body.startedAt - body.excusedMs;
      const received = raw.socket.bytesRead - body.bytesBefore;
      const earnedMs = limits.graceMs + (received / limits.minBytesPerSecond) * 1000;
      const why =
        elapsedMs > earnedMs ? 'slow' : !body.longBody && elapsedMs > limits.timeoutMs ? 'long' : undefined;
      if (why === undefined) continue;
      inProgress.delete(body);
      cut(body.request, why);
      if (body.reply.raw.headersSent) raw.socket.destroy();
      else
        refuseOnSocket(
          raw.socket,
          408,
          'OperationTimeout',
          why === 'slow'
            ? `The request’s body arrived slower than ${limits.minBytesPerSecond} bytes a second`
            : `The request’s body did not arrive whole within ${Math.round(limits.timeoutMs / 1000)} seconds`,
        );
    }
  };
  const timer = setInterval(look, TICK_MS).unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
