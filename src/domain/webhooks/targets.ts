/**
 * Where outgoing webhooks may go. Unless the operator allows it, not to the server's own network
 * (`shared/public-addresses.ts`), so a workspace member cannot make the server call what only the server
 * can reach.
 */
import { isPrivateAddress, literalAddress } from '../shared/public-addresses.ts';

/** Why a subscription may not post to `url` (known before any lookup), or undefined. */
export function targetProblem(url: URL, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const literal = literalAddress(url);
  // A name is checked when it is looked up, at each delivery: what it resolves to may change.
  if (literal !== undefined && isPrivateAddress(literal)) {
    return `${literal} is not a public address (PARLEY_WEBHOOK_PRIVATE_TARGETS is off)`;
  }
  return undefined;
}
