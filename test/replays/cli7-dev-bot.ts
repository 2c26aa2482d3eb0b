/**
 * What `bp dev` of the current CLI (7.x) does against a server for a bot project, replayed step by step.
 * The registry serves only CLI 0.8, so this follows the source, botpress/botpress at commit
 * 4f4a05a0c427ce1fac9d7859a89bb995106051ac (packages/cli 7.1.2):
 *
 * - packages/cli/src/command-implementations/dev-command.ts (`run`): the tunnel's URLs from
 *   `--tunnel-url` and the tunnel id (a UUID, cached per project): the WebSocket's is the tunnel URL
 *   with `ws`/`wss` and its own path, the bot's `url` is its origin with the path `/<tunnelId>` only;
 *   each `request` down the tunnel is forwarded to `http://localhost:<port><path>?<query>` with its
 *   method, headers and body (`_forwardTunnelRequest`, axios with `responseType: 'text'` and any status
 *   accepted) and its answer sent back as `{ requestId, status, headers, body }`; `hello` every 5 s
 *   (TUNNEL_HELLO_INTERVAL). The bot's process is the built bundle's `default.start(port)` (`_spawnWorker`)
 *   with `BP_API_URL` and `BP_TOKEN` (the developer's token) in its environment.
 * - packages/cli/src/utils/tunnel-utils.ts (`TunnelSupervisor`): `TunnelTail.new(wsUrl, tunnelId)` of
 *   `@bpinternal/tunnel` (^0.1.1; read at 0.1.11, src/tunnel-client.ts and src/types.ts), which opens
 *   `<wsUrl>/<tunnelId>` with `User-Agent: tunnel-client`, takes `{ type: 'request', id, method, path,
 *   query?, headers?, body? }` and `{ type: 'hello' }`, and sends `{ type: 'response', requestId, status,
 *   headers?, body? }` and hellos. Its TypeScript sources do not compile under this repository's
 *   settings, so the same messages are made here over `ws`.
 * - dev-command.ts (`_deployDevBot`): without a cached dev bot, `createBot({ dev: true, url })`, then
 *   `updateBot(prepareUpdateBotBody({ ...prepareCreateBotBody(def), ...prepareBotDependencies(def),
 *   id, url }, bot))`; then the tables (none here) and the integrations' webhook URLs (none here).
 * - packages/cli/src/api/bot-body.ts (`prepareUpdateBotBody`): `null` for each of the bot's current
 *   `integrations`, `plugins`, `states`, `recurringEvents`, tags, events and actions the definition
 *   does not have.
 * - packages/cli/src/api/client.ts (`ApiClient`): every request carries `x-multiple-integrations: true`.
 */
import WebSocket from 'ws';
import { cli7UpdateBody } from './cli7-deploy-bot.ts';

/** `@bpinternal/tunnel`'s `TunnelRequest` (what the server sends down the tunnel). */
interface TunnelRequest {
  type?: 'request';
  id: string;
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: string;
}

/** Its `TunnelResponse` (what the CLI answers). */
interface TunnelResponse {
  requestId: string;
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** dev-command.ts: `TUNNEL_HELLO_INTERVAL`. */
const TUNNEL_HELLO_INTERVAL = 5000;

/** The tunnel's WebSocket URL and the bot's `url`, as `run` makes them from `--tunnel-url`. */
export function cli7TunnelUrls(tunnelUrl: string, tunnelId: string): { ws: string; http: string } {
  const url = new URL(tunnelUrl);
  const secured = url.protocol === 'https:' || url.protocol === 'wss:';
  const path = url.pathname === '/' ? '' : url.pathname;
  return {
    ws: `${secured ? 'wss' : 'ws'}://${url.host}${path}`,
    http: `${secured ? 'https' : 'http'}://${url.host}/${tunnelId}`,
  };
}

/** `_forwardTunnelRequest`: the request, made of the bot's local process, and its answer for the tunnel. */
async function forward(port: number, request: TunnelRequest): Promise<TunnelResponse> {
  const url = `http://localhost:${port}${request.path}${request.query ? `?${request.query}` : ''}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const response = await fetch(url, {
    method: request.method,
    headers,
    ...(request.body !== undefined && { body: request.body }),
  });
  return {
    requestId: request.id,
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    body: await response.text(),
  };
}

export interface Cli7Tunnel {
  /** The requests that came down the tunnel, by `x-bp-operation`. */
  operations: string[];
  close(): void;
}

function isRequest(data: unknown): data is TunnelRequest {
  return (
    typeof data === 'object' &&
    data !== null &&
    'id' in data &&
    typeof data.id === 'string' &&
    'method' in data &&
    typeof data.method === 'string' &&
    'path' in data &&
    typeof data.path === 'string'
  );
}

/** The tunnel `bp dev` keeps open: each request forwarded to the bot's process on `port`. */
export async function openCli7Tunnel(wsUrl: string, tunnelId: string, port: number): Promise<Cli7Tunnel> {
  const socket = new WebSocket(`${wsUrl}/${tunnelId}`, { headers: { 'User-Agent': 'tunnel-client' } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const send = (message: object) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  };
  const operations: string[] = [];
  const timer = setInterval(() => send({ type: 'hello' }), TUNNEL_HELLO_INTERVAL);
  socket.on('close', () => clearInterval(timer));
  socket.on('message', (data: Buffer) => {
    const message: unknown = JSON.parse(data.toString());
    if (!isRequest(message)) return;
    const operation = message.headers?.['x-bp-operation'];
    if (typeof operation === 'string') operations.push(operation);
    forward(port, message).then(
      (response) => send({ type: 'response', ...response }),
      () =>
        send({
          type: 'response',
          requestId: message.id,
          status: 500,
          body: 'Internal error while handling request',
        }),
    );
  });
  return {
    operations,
    close: () => {
      clearInterval(timer);
      socket.close(1000);
    },
  };
}

/** The headers the CLI's client adds to the official client's own (authorization, x-workspace-id). */
export { CLI7_HEADERS, cli7PutBot } from './cli7-deploy-bot.ts';

/** `createBot`'s body for a new dev bot. */
export function cli7CreateDevBotBody(url: string): { dev: true; url: string } {
  return { dev: true, url };
}

/** An action of the bot's definition, its schemas as `prepareCreateBotBody` converts them. */
export interface Cli7Action {
  input: { schema: object };
  output: { schema: object };
}

/**
 * `updateBot`'s body for a bot whose definition declares only `actions` (no integrations, plugins,
 * states, events or tags): `before` is the bot as `createBot` answered it.
 */
export function cli7UpdateDevBotBody(
  botId: string,
  url: string,
  before: { integrations: string[] },
  actions: Record<string, Cli7Action>,
): Record<string, unknown> {
  return cli7UpdateBody({
    botId,
    url,
    actions,
    integrations: {},
    plugins: {},
    before: { integrations: before.integrations, plugins: [] },
  });
}
