/**
 * Where outgoing webhooks (and workspaces' model providers) may go. Unless the operator allows it, not
 * to the server's own network (`shared/public-addresses.ts`), so a workspace member cannot make the
 * server call what only the server can reach.
 */
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
