/**
 * The network a bundle sees in its sandbox, which has only its own loopback: this server's API on a port
 * of that loopback (`BP_API_URL`), and, when the operator allows any egress, an HTTP proxy on another
 * port, named by the usual environment variables and used by Node's HTTP clients (the `http` and `https`
 * modules' default agents, and `fetch`). Both ports lead to Unix sockets the server serves: what a
 * connection may reach is decided there, not here (this code runs beside the bot's and guards nothing).
 */
import { createRequire } from 'node:module';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { API_SOCKET, EGRESS_SOCKET, FETCH_PROXY_FILE, RUNNER_FILE } from './layout.ts';

const LOOPBACK = '127.0.0.1';

/** Sets the bundle's network up; answers the URL of the API. */
export async function openSandboxNetwork(egress: boolean): Promise<string> {
  const apiPort = await relay(API_SOCKET);
  if (egress) {
    const proxyPort = await relay(EGRESS_SOCKET);
    const proxy = `http://${LOOPBACK}:${proxyPort}`;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) process.env[name] = proxy;
    // Only the API's own port is reached directly: anything else, loopback included, goes to the proxy,
    // which refuses it with the reason (or, for this server's own URLs, sends it to the API).
    for (const name of ['NO_PROXY', 'no_proxy']) process.env[name] = `${LOOPBACK}:${apiPort}`;
    // A client that speaks to the proxy itself (axios, with HTTP_PROXY) may do it through the default
    // agent: the relays' own ports are reached directly, never through the proxy again.
    const direct = new Set([apiPort, proxyPort]);
    http.globalAgent = new SandboxAgent(proxy, direct);
    https.globalAgent = new SandboxAgent(proxy, direct);
    proxyFetch();
  }
  return `http://${LOOPBACK}:${apiPort}`;
}

/** A port of the sandbox's loopback whose connections are piped to `socketPath`. */
function relay(socketPath: string): Promise<number> {
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

type ConnectOptions = Parameters<HttpsProxyAgent<string>['connect']>[1];

/** Through the proxy, but for the relays' ports of the sandbox's loopback (the API's, the proxy's). */
class SandboxAgent extends HttpsProxyAgent<string> {
  constructor(
    proxy: string,
    private readonly direct: Set<number>,
  ) {
    super(proxy);
  }

  override async connect(req: http.ClientRequest, opts: ConnectOptions): Promise<net.Socket> {
    if (opts.host === LOOPBACK && this.direct.has(Number(opts.port))) {
      return opts.secureEndpoint ? tls.connect({ ...opts, host: LOOPBACK }) : net.connect(opts);
    }
    return super.connect(req, opts);
  }
}

/** Node's fetch, through the proxy from its first call on. */
function proxyFetch(): void {
  const builtin = globalThis.fetch;
  let ready = false;
  globalThis.fetch = (input, init) => {
    if (!ready) {
      const load = createRequire(RUNNER_FILE);
      const setup: unknown = load(FETCH_PROXY_FILE);
      const use: unknown =
        typeof setup === 'object' && setup !== null ? Reflect.get(setup, 'useProxyForFetch') : undefined;
      if (typeof use === 'function') Reflect.apply(use, setup, []);
      ready = true;
    }
    return builtin(input, init);
  };
}
