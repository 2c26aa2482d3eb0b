/**
 * DNS lookups that refuse names resolving to addresses a tenant may not reach (`isPublicAddress`, unless
 * `allowed` says otherwise). Used as the `lookup` of the connection itself, so the address checked is the
 * address connected to: a name that resolves elsewhere a second later changes nothing.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, listedAddress } from './public-addresses.ts';
import type { AddressList } from './public-addresses.ts';

/** A name that resolves to an address the rule refuses (not a failure of the network). */
export class AddressRefused extends Error {}

/** Why a connection to `address` is refused, or undefined when it may be made. */
export type AddressRule = (address: string) => string | undefined;

/** The rule of outgoing connections: public addresses only, and `because` says what would allow more. */
export function publicOnly(
  because: string,
  allowed: (address: string) => boolean = () => false,
): AddressRule {
  return (address) =>
    isPublicAddress(address) || allowed(address) ? undefined : `not a public address (${because})`;
}

/** A lookup for `net.connect`/`http.request` that fails when any address of the name is refused. */
export function checkedLookup(rule: AddressRule): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      for (const { address } of addresses) {
        const refused = rule(address);
        if (refused !== undefined)
          return callback(new AddressRefused(`${hostname} resolves to ${address}, ${refused}`), '', 0);
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Where bots' own connections may go: public addresses while `internet`, and the `allowed` ones either way. */
export interface BotTargets {
  internet: boolean;
  /** Non-public addresses (and ports) that may be reached nonetheless. */
  allowed: AddressList;
}

/**
 * The rule of `targets` for a connection to `port`: an allowed address first, then a public one if the
 * internet is open. `settings` name what the operator sets, for the refusals to say.
 */
export function botTargetRule(
  targets: BotTargets,
  port: number,
  settings: { internet: string; allowed: string },
): AddressRule {
  return (address) => {
    if (listedAddress(targets.allowed, address, port)) return undefined;
    if (isPublicAddress(address))
      return targets.internet
        ? undefined
        : `on the internet, closed to bots here (${settings.internet} is off)`;
    return `not a public address (${settings.allowed} does not list it)`;
  };
}
