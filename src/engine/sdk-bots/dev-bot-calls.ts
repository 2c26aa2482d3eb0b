/**
 * Calls of a dev bot (`bp dev`'s: `dev: true` with a `url`), made to the developer's own process with
 * the same invocation contract as a bundle's: down the tunnel its `url` names when that tunnel is open
 * in this process, else as a POST to the `url`, under the address policy of outgoing webhooks (public
 * addresses only unless PARLEY_DEV_BOT_PRIVATE_TARGETS is on), checked at the lookup of the connection.
 */
import http from 'node:http';
import https from 'node:https';
import { TunnelUnanswered } from '../../domain/bots/dev-tunnels.ts';
import type { DevTunnels } from '../../domain/bots/dev-tunnels.ts';
import { literalAddress } from '../../domain/shared/public-addresses.ts';
import { AddressRefused, checkedLookup, publicOnly } from '../../domain/shared/public-lookup.ts';
import type { BundleRequest, BundleResponse } from './bot-process.ts';
import { BundleCallFailure } from './bundle-host.ts';

/** The most of an answer read: what a bundle's handler answers over IPC is bounded alike. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

const publicTargets = publicOnly('PARLEY_DEV_BOT_PRIVATE_TARGETS is off');
const publicLookup = checkedLookup(publicTargets);

export interface DevBotCallOptions {
  /** A dev bot's `url` may be a non-public address. */
  allowPrivate: boolean;
}

export class DevBotCalls {
  constructor(
    private readonly tunnels: DevTunnels,
    private readonly options: DevBotCallOptions,
  ) {}

  /**
   * One call of the bot's handler, answered as it answered. No answer in `timeoutMs` is final, as a
   * bundle's call past its time is; a process not reached (not started yet, restarting) may be called again.
   */
  async call(devUrl: string, request: BundleRequest, timeoutMs: number): Promise<BundleResponse> {
    let url: URL;
    try {
      url = new URL(devUrl);
    } catch {
      throw new BundleCallFailure(`the dev bot's url "${devUrl}" is not a URL`);
    }
    const tunnelId = this.tunnels.tunnelOf(url);
    if (tunnelId === undefined) return this.post(url, request, timeoutMs);
    try {
      return await this.tunnels.call(tunnelId, request, timeoutMs);
    } catch (err) {
      if (err instanceof TunnelUnanswered && err.timedOut) throw new BundleCallFailure(err.message, true);
      throw err;
    }
  }

  private post(url: URL, request: BundleRequest, timeoutMs: number): Promise<BundleResponse> {
    const { allowPrivate } = this.options;
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return Promise.reject(
        new BundleCallFailure(`the dev bot's url must be http or https, not ${url.protocol}`),
      );
    const literal = literalAddress(url);
    // A literal address is connected to without a lookup: it is checked here.
    const refused = allowPrivate || literal === undefined ? undefined : publicTargets(literal);
    if (refused !== undefined)
      return Promise.reject(new BundleCallFailure(`the dev bot's url: ${literal} is ${refused}`));
    return new Promise((resolve, reject) => {
      const outgoing = (url.protocol === 'https:' ? https : http).request(
        url,
        {
          method: request.method,
          headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
          // A connection of its own: a kept-alive one could have been made to another address.
          agent: false,
          ...(!allowPrivate && { lookup: publicLookup }),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              outgoing.destroy(
                new BundleCallFailure(`the dev bot answered more than ${MAX_ANSWER_BYTES} bytes`),
              );
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: textHeaders(response.headers),
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          response.on('error', reject);
        },
      );
      const timer = setTimeout(
        () =>
          outgoing.destroy(
            new BundleCallFailure(`the dev bot did not answer within ${timeoutMs / 1000} s`, true),
          ),
        timeoutMs,
      );
      outgoing.on('error', (err) => {
        // A name that resolves where the policy refuses is final; the process not reached may pass.
        reject(
          err instanceof AddressRefused ? new BundleCallFailure(`the dev bot's url: ${err.message}`) : err,
        );
      });
      outgoing.on('close', () => clearTimeout(timer));
      outgoing.end(request.body);
    });
  }
}

function textHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') text[name] = value;
    else if (Array.isArray(value)) text[name] = value.join(', ');
  }
  return text;
}
