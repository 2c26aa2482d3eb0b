// Parley's own operations (those the official clients do not have) through the contract's client: the
// official clients stay the proof of wire compatibility, this one of Parley's additions.
import { APIS, mountOf } from '../../src/contract/apis.ts';
import { clientOf, targetOf } from '../../src/contract/client.ts';
import type { Client } from '../../src/contract/client.ts';
import { HEADERS } from '../../src/contract/headers.ts';
import type { TestServer } from './server.ts';

/** The Admin API as the owner, in the first workspace; a failure throws with its status and body. */
export function parleyAdmin(t: TestServer): Client<typeof APIS.admin.operations> {
  const base = `${t.url}${mountOf(APIS.admin)}`;
  return clientOf(APIS.admin.operations, async (wire) => {
    const response = await fetch(`${base}${targetOf(wire)}`, {
      method: wire.method,
      headers: {
        [HEADERS.authorization]: `Bearer ${t.token}`,
        [HEADERS.workspaceId]: t.workspaceId,
        ...wire.headers,
        ...(wire.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(wire.body !== undefined && { body: JSON.stringify(wire.body) }),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${wire.method} ${targetOf(wire)} answered ${response.status}: ${text}`);
    return JSON.parse(text) as unknown;
  });
}
