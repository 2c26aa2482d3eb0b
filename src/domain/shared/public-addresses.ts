/**
 * Which addresses are on the public internet: the one policy of every connection the server makes for a
 * tenant (outgoing webhooks, and what sandboxed bot code reaches through the egress proxy). Loopback,
 * private, link-local (cloud metadata), shared, reserved and multicast ranges are not public, in every
 * form an IPv6 address can carry an IPv4 one (mapped, translated, NAT64, 6to4) or hide it (Teredo, the
 * deprecated IPv4-compatible form).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Global unicast IPv6 (2000::/3): the only IPv6 space routed on the internet. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** The well-known NAT64 prefix (RFC 6052): the last 32 bits are the IPv4 address it reaches. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/** Whether `address` (an IP address, IPv4 or IPv6) is on the public internet; false for anything else. */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  if (isIP(address) === 4) return ipaddr.IPv4.parse(address).range() === 'unicast';
  // A zone belongs to a link-local address only.
  if (address.includes('%')) return false;
  // Read back as the URL parser writes it: ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as mapped.
  const v6 = ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  const embedded = embeddedIpv4(v6);
  if (embedded !== undefined) return embedded.range() === 'unicast';
  return v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast';
}

/** Whether `address` is an IP address outside the public internet (a name is neither). */
export function isPrivateAddress(address: string): boolean {
  return isIP(address) !== 0 && !isPublicAddress(address);
}

/**
 * The IPv4 address an IPv6 one stands for, in the forms that are forwarded to it: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
 * (`2002:AABB:CCDD::`).
 */
function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = v6.range();
  const last32 = () => ipv4Of(v6.parts[6] ?? 0, v6.parts[7] ?? 0);
  if (range === 'ipv4Mapped' || range === 'rfc6145') return last32();
  if (v6.match(NAT64)) return last32();
  if (range === '6to4') return ipv4Of(v6.parts[1] ?? 0, v6.parts[2] ?? 0);
  return undefined;
}

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The host of a URL as an IP address, when it is one (`[::1]` without its brackets). */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? undefined : host;
}

/** Addresses or networks, each on one port or any: what an operator allows beyond the public internet. */
export type AddressList = { network: [ipaddr.IPv4 | ipaddr.IPv6, number]; port?: number }[];

/**
 * A comma-separated list of `address`, `address/prefix`, `address:port`, `[v6]:port` or
 * `[v6/prefix]:port`; throws on an entry that is none.
 */
export function parseAddressList(list: string): AddressList {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = entry.startsWith('[')
        ? /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry)
        : entry.split(':').length > 2
          ? [entry, entry]
          : /^([^:]+)(?::(\d{1,5}))?$/.exec(entry);
      const address = match?.[1];
      const port = match?.[2] === undefined ? undefined : Number(match[2]);
      if (!address || (port !== undefined && (port < 1 || port > 65535)))
        throw new Error(`"${entry}" is not an address, a network or either with a port`);
      try {
        const network = address.includes('/')
          ? ipaddr.parseCIDR(address)
          : ((one: ipaddr.IPv4 | ipaddr.IPv6) =>
              [one, one.kind() === 'ipv4' ? 32 : 128] satisfies [ipaddr.IPv4 | ipaddr.IPv6, number])(
              ipaddr.parse(address),
            );
        return { network, ...(port !== undefined && { port }) };
      } catch {
        throw new Error(`"${entry}" is not an address, a network or either with a port`);
      }
    });
}

/** Whether `address` (on `port`) is in the list. */
export function listedAddress(list: AddressList, address: string, port: number): boolean {
  if (list.length === 0 || isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  return list.some(
    (entry) =>
      (entry.port === undefined || entry.port === port) &&
      parsed.kind() === entry.network[0].kind() &&
      parsed.match(entry.network),
  );
}
