/**
 * `bp dev`'s tunnel (`domain/bots/dev-tunnels.ts`): a WebSocket at `/dev-tunnel/{tunnelId}`, which the
 * CLI opens when given `--tunnel-url <server>/dev-tunnel`. The server calls the dev bot down it.
 */
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import type { DevTunnels } from '../domain/bots/dev-tunnels.ts';
import { invalidPayload } from '../domain/shared/errors.ts';
import { isUpgradeRequest } from './headers.ts';
import { LARGEST_PAYLOAD } from './limits.ts';

export const DEV_TUNNEL_PREFIX = '/dev-tunnel';

/** The client's first frames come after the 101: nothing of the upgrade's head is left to hand on. */
const NO_HEAD = Buffer.alloc(0);

export async function devTunnelRoutes(app: FastifyInstance, tunnels: DevTunnels): Promise<void> {
  // Not @fastify/websocket: a second registration of it would route each upgrade twice (the Chat API's
  // already hands every upgrade request to the router, this route's included), so it upgrades here.
  const sockets = new WebSocketServer({
    noServer: true,
    // A response carries what the bot's handler answered: an action's output as large as a request.
    maxPayload: LARGEST_PAYLOAD,
  });
  // Before the server closes, which would wait for the tunnels' connections to end.
  app.addHook('preClose', (done) => {
    for (const socket of sockets.clients) socket.close(1001, 'the server is closing');
    sockets.close();
    done();
  });
  app.route<{ Params: { tunnelId: string } }>({
    method: 'GET',
    url: `${DEV_TUNNEL_PREFIX}/:tunnelId`,
    schema: { hide: true },
    handler: async (request, reply) => {
      if (!isUpgradeRequest(request))
        throw invalidPayload('The dev tunnel is a WebSocket: `bp dev --tunnel-url` opens it');
      const { tunnelId } = request.params;
      reply.hijack();
      sockets.handleUpgrade(request.raw, request.raw.socket, NO_HEAD, (socket) => {
        const refused = tunnels.refusal(tunnelId);
        if (refused) {
          socket.close(refused.code, refused.reason);
          return;
        }
        const tunnel = tunnels.open(tunnelId, {
          send: (text) => socket.send(text),
          close: (code, reason) => socket.close(code, reason),
        });
        socket.on('message', (data, isBinary) => {
          if (!isBinary) tunnel.message(textOf(data));
        });
        socket.on('close', () => tunnel.closed());
        request.log.info({ tunnelId }, 'a dev tunnel opened');
      });
    },
  });
}

/** A text frame's data, as `ws` hands it (one buffer, fragments, or an ArrayBuffer). */
function textOf(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
