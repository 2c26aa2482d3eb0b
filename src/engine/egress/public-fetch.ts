/**
 * A fetch for a tenant's HTTP targets (workspaces' model providers): every connection it makes, to a
 * literal address or to a name (looked up with `checkedLookup`, so the address checked is the one
 * connected to), redirects included, is refused when the rule refuses its address.
 */
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { AddressRefused, checkedLookup } from '../../domain/shared/public-lookup.ts';
import type { AddressRule } from '../../domain/shared/public-lookup.ts';

export function publicFetch(rule: AddressRule): typeof fetch {
  const connect = buildConnector({ lookup: checkedLookup(rule) });
  const dispatcher = new Agent({
    connect: (options, callback) => {
      // A literal address is connected to without a lookup: it is checked here.
      const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
      const refused = isIP(host) === 0 ? undefined : rule(host);
      if (refused !== undefined) {
        callback(new AddressRefused(`${host} is ${refused}`), null);
        return;
      }
      connect(options, callback);
    },
  });
  return (input, init) => fetch(input, { ...init, dispatcher });
}
