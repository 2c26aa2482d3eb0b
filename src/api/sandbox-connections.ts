/**
 * Connections from sandboxed bot processes (SDK bots and integrations), which reach this server through
 * a socket of their sandbox, not its port: they are served by the same HTTP server, but only the APIs a
 * bot's code calls answer them. The rest of what the port serves (metrics, the console, end users'
 * APIs) is not the business of a tenant's code: it gets a 404 as for a path that does not exist.
 *
 * A Unix socket has no peer address; each sandbox's connections are given one of their own, in
 * 0.0.0.0/8 (which no peer on a network has, and no trusted proxy list covers): what counts connections
 * and requests per address counts each sandbox apart, and the logs tell them apart.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../domain/shared/errors.ts';

/** What bot code calls: the Runtime, Admin, Files, Tables and Cognitive APIs, and files' signed URLs. */
const SANDBOX_PATHS = ['/v1/', '/v2/cognitive/', '/file-content/'];

const sandboxed = new WeakSet<Socket>();

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Serves a connection a sandboxed process made, as one of its own port's, within SANDBOX_PATHS;
     * `sandbox` (from 0 to 65535) names its address.
     */
    serveSandboxConnection(socket: Socket, sandbox: number): void;
  }
}

export function installSandboxConnections(app: FastifyInstance): void {
  app.decorate('serveSandboxConnection', (socket: Socket, sandbox: number) => {
    sandboxed.add(socket);
    Object.defineProperty(socket, 'remoteAddress', { value: sandboxAddress(sandbox) });
    app.server.emit('connection', socket);
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!sandboxed.has(request.raw.socket)) return;
    // One request per connection. Bot code often makes a client, with an agent that keeps its
    // connections alive, for each event (the SDK's do): every connection left open would hold three of
    // its sandbox's few descriptors (its socket and both ends of the relay here) and one of this server's
    // connections, for as long as a keep-alive lasts. Closed at each answer, they are as many as the
    // calls in flight.
    reply.header('connection', 'close');
    const path = request.url.replace(/^\/+/, '/');
    if (!SANDBOX_PATHS.some((prefix) => path.startsWith(prefix)))
      throw notFound('Route', request.url.split('?')[0] ?? '');
  });
}

/** The address a sandbox's connections show: `0.0.<high byte>.<low byte>` of its number. */
export function sandboxAddress(sandbox: number): string {
  return `0.0.${(sandbox >> 8) & 0xff}.${sandbox & 0xff}`;
}
