/**
 * The one way out of a sandbox: an HTTP proxy on a Unix socket shown inside it (the sandbox has no network
 * of its own). It tunnels `CONNECT host:port` and forwards absolute-form requests (`GET http://…`, and
 * `https://…` as some clients send them), each to an address the egress policy allows, checked on the
 * address actually connected to (`checkedLookup`): the public internet (when the operator allows it),
 * this server's own origins, and the private targets the operator lists. Everything else is answered 403
 * with the reason, which the bot's logs show.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Socket } from 'node:net';
import { chmod } from 'node:fs/promises';
import { AddressRefused, botTargetRule, checkedLookup } from '../../domain/shared/public-lookup.ts';
import type { BotTargets } from '../../domain/shared/public-lookup.ts';

/** The settings that open SDK bots' connections, named in what a refusal says. */
const SDK_BOT_SETTINGS = { internet: 'PARLEY_SDK_BOT_INTERNET', allowed: 'PARLEY_SDK_BOT_PRIVATE_TARGETS' };

export interface EgressPolicy extends BotTargets {
  /**
   * `host:port` of this server itself (its listening address, its public URL): reached through the
   * sandbox's own API socket, as BP_API_URL is (so only what bot code may call answers).
   */
  ownOrigins: string[];
}

/** What the proxy tells about a connection it refused. */
export interface Refusal {
  target: string;
  reason: string;
}

type Route =
  | { kind: 'own' }
  | { kind: 'refused'; reason: string }
  | { kind: 'checked'; lookup?: ReturnType<typeof checkedLookup> };

/** How long an upstream has to accept a connection. */
const CONNECT_TIMEOUT_MS = 10_000;
/** A tunnel or request with no traffic for this long is closed. */
const IDLE_TIMEOUT_MS = 120_000;
/** Connections one sandbox may hold open through the proxy at once. */
const MAX_OPEN_PER_SANDBOX = 64;
/** Headers about the hop between the client and the proxy, not for the upstream. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export class EgressProxy {
  constructor(private readonly policy: EgressPolicy) {}

  /**
   * Serves one sandbox on `socketPath`, telling `onRefused` each connection it refuses, and sending those
   * to this server's own origins to `apiSocket`; answers how to stop (which ends its open connections).
   */
  async serve(
    socketPath: string,
    apiSocket: string,
    onRefused: (refusal: Refusal) => void,
  ): Promise<() => Promise<void>> {
    const open = new Set<Socket>();
    const server = http.createServer({ requestTimeout: 0 });
    server.on('connection', (socket: Socket) => {
      if (open.size >= MAX_OPEN_PER_SANDBOX) {
        socket.destroy();
        onRefused({
          target: '(any)',
          reason: `more than ${MAX_OPEN_PER_SANDBOX} connections open through the proxy`,
        });
        return;
      }
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
    });
    server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) =>
      this.tunnel(onRefused, apiSocket, req, socket, head),
    );
    server.on('request', (req, res) => this.forward(onRefused, apiSocket, req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    // Its folder is the sandbox user's alone: the socket itself may be open to it.
    await chmod(socketPath, 0o666);
    return async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
  }

  /** `CONNECT host:port`: a tunnel, once the upstream accepted it. */
  private tunnel(
    onRefused: (refusal: Refusal) => void,
    apiSocket: string,
    req: http.IncomingMessage,
    client: Socket,
    head: Buffer,
  ): void {
    const target = authorityOf(req.url ?? '');
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\nCONNECT takes host:port\n');
      return;
    }
    const route = this.routeOf(target);
    if (route.kind === 'refused') {
      this.refuse(onRefused, client, authorityText(target), route.reason);
      return;
    }
    const upstream =
      route.kind === 'own'
        ? net.connect({ path: apiSocket, timeout: CONNECT_TIMEOUT_MS })
        : net.connect({
            host: target.host,
            port: target.port,
            ...(route.lookup && { lookup: route.lookup }),
            timeout: CONNECT_TIMEOUT_MS,
          });
    upstream.once('timeout', () => upstream.destroy(new Error('no connection within 10 s')));
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    let connected = false;
    upstream.once('connect', () => (connected = true));
    upstream.on('error', (err) => {
      if (connected) client.destroy();
      else this.refuseOrFail(onRefused, client, target, err);
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  }

  /** An absolute-form request (`GET http://host/path`): sent on by the proxy, over TLS for `https:`. */
  private forward(
    onRefused: (refusal: Refusal) => void,
    apiSocket: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('a proxy request takes an absolute http(s) URL\n');
      return;
    }
    const target = {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    };
    const route = this.routeOf(target);
    if (route.kind === 'refused') {
      this.refusedResponse(onRefused, res, authorityText(target), route.reason);
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !HOP_HEADERS.has(name)),
    );
    const common = {
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers,
      agent: false,
      timeout: CONNECT_TIMEOUT_MS,
    } as const;
    const upstream =
      route.kind === 'own'
        ? http.request({ ...common, socketPath: apiSocket })
        : (url.protocol === 'https:' ? https : http).request({
            ...common,
            protocol: url.protocol,
            host: target.host,
            port: target.port,
            ...(route.lookup && { lookup: route.lookup }),
          });
    upstream.once('timeout', () => upstream.destroy(new Error('no answer within 10 s')));
    upstream.on('response', (answer) => {
      upstream.setTimeout(0);
      const answerHeaders = Object.fromEntries(
        Object.entries(answer.headers).filter(([name]) => !HOP_HEADERS.has(name)),
      );
      res.writeHead(answer.statusCode ?? 502, answerHeaders);
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else if (isRefusal(err)) this.refusedResponse(onRefused, res, authorityText(target), err.message);
      else
        res
          .writeHead(502, { 'content-type': 'text/plain' })
          .end(`the proxy could not reach ${url.host}: ${err.message}\n`);
    });
    req.pipe(upstream);
  }

  /**
   * Where a target leads: this server's own origins to the sandbox's API socket; a literal address is
   * checked here (no lookup happens for one); a name at the lookup of each connection.
   */
  private routeOf(target: { host: string; port: number }): Route {
    const host = target.host.toLowerCase();
    if (this.policy.ownOrigins.includes(`${host}:${target.port}`)) return { kind: 'own' };
    const rule = botTargetRule(this.policy, target.port, SDK_BOT_SETTINGS);
    if (net.isIP(host) === 0) return { kind: 'checked', lookup: checkedLookup(rule) };
    const refused = rule(host);
    return refused === undefined ? { kind: 'checked' } : { kind: 'refused', reason: refused };
  }

  private refuse(
    onRefused: (refusal: Refusal) => void,
    client: Socket,
    target: string,
    reason: string,
  ): void {
    onRefused({ target, reason });
    const body = `Parley refused a connection to ${target}: ${reason}\n`;
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }

  private refusedResponse(
    onRefused: (refusal: Refusal) => void,
    res: http.ServerResponse,
    target: string,
    reason: string,
  ): void {
    onRefused({ target, reason });
    res
      .writeHead(403, { 'content-type': 'text/plain' })
      .end(`Parley refused a connection to ${target}: ${reason}\n`);
  }

  private refuseOrFail(
    onRefused: (refusal: Refusal) => void,
    client: Socket,
    target: { host: string; port: number },
    err: Error,
  ): void {
    if (isRefusal(err)) {
      this.refuse(onRefused, client, authorityText(target), err.message);
      return;
    }
    const body = `the proxy could not reach ${target.host}:${target.port}: ${err.message}\n`;
    client.end(
      `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
}

function isRefusal(err: Error): boolean {
  return err instanceof AddressRefused;
}

/** `host:port`, as a CONNECT names it (`[::1]:443` for IPv6). */
function authorityText(target: { host: string; port: number }): string {
  return `${net.isIPv6(target.host) ? `[${target.host}]` : target.host}:${target.port}`;
}

/** `host:port` of a CONNECT (`[::1]:443` for IPv6). */
function authorityOf(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  const host = match[1] ?? match[2];
  if (!host || port < 1 || port > 65535) return undefined;
  return { host, port };
}
