/**
 * Where outgoing webhooks may go. Unless the operator allows it, not to the server's own network:
 * loopback, private, link-local (cloud metadata) and other non-public addresses, so a workspace member
 * cannot make the server call what only the server can reach.
 */
import { BlockList, isIP } from 'node:net';

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address is outside the public internet. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return NOT_PUBLIC.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of a URL as an IP address, when it is one (`[::1]` without its brackets). */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? undefined : host;
}

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
