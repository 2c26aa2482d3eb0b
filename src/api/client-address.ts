import { BlockList, isIP } from 'node:net';
import { normalizeIP } from '@fastify/rate-limit';
import type { TrustProxy } from '../config.ts';

/**
 * Whether the peer at `hop` (0: the one connected to this server; then the `X-Forwarded-For` entries,
 * nearest first) is a proxy to believe, as Fastify's `trustProxy` function takes it.
 */
export type ProxyTrust = (address: string, hop: number) => boolean;

/** An IPv4 client as Node may show it on a dual-stack socket: `::ffff:192.0.2.1`. */
const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Undefined when no proxy is trusted: `X-Forwarded-For` is then ignored. */
export function proxyTrust(trust: TrustProxy): ProxyTrust | undefined {
  if (trust.kind === 'none') return undefined;
  if (trust.kind === 'hops') {
    const { hops } = trust;
    return (_address, hop) => hop < hops;
  }
  const proxies = new BlockList();
  for (const { network, prefix, family } of trust.subnets) proxies.addSubnet(network, prefix, family);
  return (address) => {
    const plain = MAPPED_IPV4.exec(address)?.[1] ?? address;
    // `X-Forwarded-For` is what the client wrote: an entry that is no address is no proxy.
    const version = isIP(plain);
    return version !== 0 && proxies.check(plain, version === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * What one client is counted as, by connection limits and rate limits alike: its address, an IPv4
 * address mapped in IPv6 as itself, and an IPv6 address as its /64 (what one subscriber is given).
 */
export function addressKey(address: string): string {
  return normalizeIP(address);
}
