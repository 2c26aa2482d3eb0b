/**
 * The tunnels `bp dev` opens (the protocol of `@bpinternal/tunnel`, the CLI's tunnel client): the CLI
 * connects a WebSocket to `<--tunnel-url>/<tunnelId>` and gives its dev bot the URL
 * `<origin of --tunnel-url>/<tunnelId>`; the server sends each call of the bot down the socket as a
 * JSON `request` and the CLI answers it with a `response` from the bot's local process. Both sides send
 * `hello` to keep the connection open. A tunnel lives in the process its socket reached: the API adds
 * it, the engine calls through it.
 */

/** The open socket of one tunnel, as the API holds it. */
export interface TunnelSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** The close codes of the tunnel protocol the CLI reads (`@bpinternal/tunnel`'s `CLOSE_CODES`). */
export const TUNNEL_CLOSE = {
  invalidTunnelId: 4000,
  tunnelIdConflict: 4001,
  invalidResponsePayload: 4002,
} as const;

/** A tunnel id as the protocol takes it (`/^\/([\w|-]+)$/`): the CLI makes a UUID unless given one. */
const TUNNEL_ID = /^[\w-]{1,100}$/;

/** Tunnels one process holds at most: each is an open socket of someone who needs no key to open it. */
export const MAX_TUNNELS = 200;

export interface TunnelRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
}

export interface TunnelResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The tunnel's end (the CLI, or the bot's process behind it) did not answer: closed, or past the call's time. */
export class TunnelUnanswered extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

interface Pending {
  resolve(response: TunnelResponse): void;
  reject(err: Error): void;
}

interface Tunnel {
  socket: TunnelSocket;
  pending: Map<string, Pending>;
}

/** The request id the server gives each call: unique in the process, never reused on a tunnel. */
let nextRequest = 0;

export class DevTunnels {
  private readonly tunnels = new Map<string, Tunnel>();

  /** Why `tunnelId` cannot be opened now (with the close code the CLI is told), or undefined. */
  refusal(tunnelId: string): { code: number; reason: string } | undefined {
    if (!TUNNEL_ID.test(tunnelId)) return { code: TUNNEL_CLOSE.invalidTunnelId, reason: 'invalid url' };
    if (this.tunnels.has(tunnelId))
      return { code: TUNNEL_CLOSE.tunnelIdConflict, reason: 'tunnel id already in use' };
    if (this.tunnels.size >= MAX_TUNNELS)
      return { code: TUNNEL_CLOSE.tunnelIdConflict, reason: 'too many tunnels are open on this server' };
    return undefined;
  }

  /** Opens `tunnelId` on `socket` (refusal() said it may be); answers what to call with each message and at its close. */
  open(tunnelId: string, socket: TunnelSocket): { message(text: string): void; closed(): void } {
    const tunnel: Tunnel = { socket, pending: new Map() };
    this.tunnels.set(tunnelId, tunnel);
    return {
      message: (text) => this.received(tunnel, text),
      closed: () => {
        if (this.tunnels.get(tunnelId) === tunnel) this.tunnels.delete(tunnelId);
        for (const call of tunnel.pending.values())
          call.reject(new TunnelUnanswered(`the dev tunnel ${tunnelId} closed before answering`));
        tunnel.pending.clear();
      },
    };
  }

  /** The tunnel a dev bot's `url` names (its path is `/<tunnelId>`), if it is open in this process. */
  tunnelOf(url: URL): string | undefined {
    const id = url.pathname.slice(1);
    return url.search === '' && this.tunnels.has(id) ? id : undefined;
  }

  /** One call down the tunnel, answered by the bot's process (or TunnelUnanswered within `timeoutMs`). */
  call(tunnelId: string, request: TunnelRequest, timeoutMs: number): Promise<TunnelResponse> {
    const tunnel = this.tunnels.get(tunnelId);
    if (!tunnel) return Promise.reject(new TunnelUnanswered(`the dev tunnel ${tunnelId} is not open`));
    const id = `req-${++nextRequest}`;
    return new Promise<TunnelResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        tunnel.pending.delete(id);
        reject(
          new TunnelUnanswered(
            `the dev tunnel ${tunnelId} did not answer within ${timeoutMs / 1000} s`,
            true,
          ),
        );
      }, timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        tunnel.pending.delete(id);
      };
      tunnel.pending.set(id, {
        resolve: (response) => (settle(), resolve(response)),
        reject: (err) => (settle(), reject(err)),
      });
      tunnel.socket.send(JSON.stringify({ type: 'request', id, ...request }));
    });
  }

  private received(tunnel: Tunnel, text: string): void {
    const message = parseMessage(text);
    if (message === undefined) {
      tunnel.socket.close(TUNNEL_CLOSE.invalidResponsePayload, 'invalid response payload');
      return;
    }
    if (message === 'hello') return;
    tunnel.pending.get(message.requestId)?.resolve(message.response);
  }
}

/** A message of the CLI: `hello`, or a response to a request (`type` is optional in the protocol). */
function parseMessage(text: string): 'hello' | { requestId: string; response: TunnelResponse } | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  if ('type' in data && data.type === 'hello') return 'hello';
  if ('type' in data && data.type !== undefined && data.type !== 'response') return undefined;
  if (!('requestId' in data) || typeof data.requestId !== 'string') return undefined;
  if (!('status' in data) || typeof data.status !== 'number') return undefined;
  const body = 'body' in data && typeof data.body === 'string' ? data.body : '';
  const headers: Record<string, string> = {};
  if ('headers' in data && typeof data.headers === 'object' && data.headers !== null) {
    for (const [name, value] of Object.entries(data.headers)) {
      if (typeof value === 'string') headers[name] = value;
      else if (Array.isArray(value)) headers[name] = value.join(', ');
    }
  }
  return { requestId: data.requestId, response: { status: data.status, headers, body } };
}
