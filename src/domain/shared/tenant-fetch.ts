/**
 * A GET of a URL a tenant gave (the audio a bot asks to transcribe), under the policy of outgoing webhooks:
 * public addresses only unless the operator allows private ones, checked at the lookup of each connection
 * (redirects included), and never more than a bound of bytes read.
 */
import http from 'node:http';
import https from 'node:https';
import { literalAddress } from './public-addresses.ts';
import { checkedLookup, publicOnly } from './public-lookup.ts';

/** Redirects followed (each to an address the policy allows): storage links often redirect once. */
const MAX_REDIRECTS = 3;

const publicTargets = publicOnly('PARLEY_WEBHOOK_PRIVATE_TARGETS is off');
const publicLookup = checkedLookup(publicTargets);

/** Why a tenant's URL could not be read: what the caller is told (the URL was theirs). */
export class TenantFetchFailed extends Error {
  constructor(
    message: string,
    /** The content is larger than allowed. */
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

export interface FetchedContent {
  bytes: Uint8Array;
  /** The `content-type` the server answered, when it gave one. */
  contentType: string | undefined;
  /** The URL read last (after redirects). */
  url: URL;
}

export interface TenantFetchOptions {
  maxBytes: number;
  /** Non-public addresses may be reached (PARLEY_WEBHOOK_PRIVATE_TARGETS). */
  allowPrivate: boolean;
  signal: AbortSignal;
}

/** Reads `url` whole (a GET), following up to MAX_REDIRECTS redirects. */
export async function fetchTenantUrl(url: URL, options: TenantFetchOptions): Promise<FetchedContent> {
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const answer = await getOnce(current, options);
    if (answer.kind === 'content') return { ...answer, url: current };
    if (redirects === MAX_REDIRECTS) throw new TenantFetchFailed(`${url.href} redirects too many times`);
    current = answer.location;
  }
}

type Answer =
  | { kind: 'content'; bytes: Uint8Array; contentType: string | undefined }
  | { kind: 'redirect'; location: URL };

function getOnce(url: URL, { maxBytes, allowPrivate, signal }: TenantFetchOptions): Promise<Answer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.reject(new TenantFetchFailed(`${url.protocol} URLs cannot be read`));
  const literal = literalAddress(url);
  // A literal address is connected to without a lookup: it is checked here.
  const refused = allowPrivate || literal === undefined ? undefined : publicTargets(literal);
  if (refused !== undefined) return Promise.reject(new TenantFetchFailed(`${literal} is ${refused}`));
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).get(
      url,
      {
        // A connection of its own: a kept-alive one could have been made to another address.
        agent: false,
        signal,
        ...(!allowPrivate && { lookup: publicLookup }),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location !== undefined) {
          response.resume();
          request.destroy();
          resolve({ kind: 'redirect', location: new URL(location, url) });
          return;
        }
        if (status !== 200) {
          response.resume();
          request.destroy();
          reject(new TenantFetchFailed(`${url.href} answered ${status}`));
          return;
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          request.destroy();
          reject(tooLarge(url, maxBytes));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            request.destroy();
            reject(tooLarge(url, maxBytes));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({
            kind: 'content',
            bytes: Buffer.concat(chunks),
            contentType: response.headers['content-type'],
          }),
        );
        response.on('error', (err) => reject(failure(url, err, signal)));
      },
    );
    request.on('error', (err) => reject(failure(url, err, signal)));
  });
}

function tooLarge(url: URL, maxBytes: number): TenantFetchFailed {
  return new TenantFetchFailed(`${url.href} has more than ${maxBytes} bytes`, true);
}

/** A failure to read: the caller's deadline is passed on as is, the rest said as the URL's. */
function failure(url: URL, err: Error, signal: AbortSignal): Error {
  if (signal.aborted) return err;
  return new TenantFetchFailed(`${url.href} could not be read: ${err.message}`);
}
