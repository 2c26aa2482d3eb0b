/**
 * Connections to a tenant's HTTP targets (workspaces' model providers): kept-alive agents whose every
 * connection looks its name up with `checkedLookup` (the address checked is the one connected to), and
 * the same rule for literal addresses, which are connected to without a lookup.
 */
import http from 'node:http';
import https from 'node:https';
import { checkedLookup } from '../../domain/shared/public-lookup.ts';
import type { AddressRule } from '../../domain/shared/public-lookup.ts';
import type { ProviderConnections } from '../../domain/llm/providers.ts';

/** Idle kept-alive connections close after this (providers close theirs after a few seconds too). */
const IDLE_MS = 4_000;

export function publicConnections(rule: AddressRule): ProviderConnections {
  const options = { keepAlive: true, timeout: IDLE_MS, lookup: checkedLookup(rule) };
  return { agents: { http: new http.Agent(options), https: new https.Agent(options) }, refusal: rule };
}
