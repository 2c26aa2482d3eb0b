/**
 * Where outgoing webhooks (and workspaces' model providers) may go. Unless the operator allows it, not
 * to the server's own network (`shared/public-addresses.ts`), so a workspace member cannot make the
 * server call what only the server can reach.
 */
import { invalidPayload } from '../shared/errors.ts';
import { isPrivateAddress, literalAddress } from '../shared/public-addresses.ts';

/**
 * Why a tenant's target may not be `url` (known before any lookup), or undefined; `setting` is what
 * allows private targets (outgoing webhooks', or workspaces' model providers').
 */
export function targetProblem(
  url: URL,
  allowPrivate: boolean,
  setting = 'PARLEY_WEBHOOK_PRIVATE_TARGETS',
): string | undefined {
  if (allowPrivate) return undefined;
  const literal = literalAddress(url);
  // A name is checked when it is looked up, at each delivery: what it resolves to may change.
  if (literal !== undefined && isPrivateAddress(literal)) {
    return `${literal} is not a public address (${setting} is off)`;
  }
  return undefined;
}

/**
 * `raw` as a tenant's target: an http(s) URL without credentials (`instead` says where they go) that
 * `targetProblem` allows; else a 400 naming `field`.
 */
export function checkTarget(
  raw: string,
  field: string,
  rule: { allowPrivate: boolean; setting?: string; instead: string },
): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidPayload(`${field}: "${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidPayload(`${field}: must be http or https, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '')
    throw invalidPayload(`${field}: may not hold credentials (${rule.instead})`);
  const problem = targetProblem(url, rule.allowPrivate, rule.setting);
  if (problem !== undefined) throw invalidPayload(`${field}: ${problem}`);
  return url;
}
