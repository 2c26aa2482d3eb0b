// Parley's own operations (those the official clients do not have) through the contract's client: the
// official clients stay the proof of wire compatibility, this one of Parley's additions.
import { APIS, mountOf } from '../../src/contract/apis.ts';
import { clientOf, targetOf } from '../../src/contract/client.ts';
import type { Client } from '../../src/contract/client.ts';
import { HEADERS } from '../../src/contract/headers.ts';
import type { OperationSpec } from '../../src/contract/operation.ts';
import type { TestServer } from './server.ts';

/** A client of one of a server's APIs, with these headers; a failure throws with its status and body. */
export function parleyClient<Ops extends readonly OperationSpec[]>(
  url: string,
  api: { prefix: string; operations: Ops },
  headers: Record<string, string>,
): Client<Ops> {
  const base = `${url}${mountOf(api)}`;
  return clientOf(api.operations, async (wire) => {
    const response = await fetch(`${base}${targetOf(wire)}`, {
      method: wire.method,
      headers: {
        ...headers,
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

/** The Admin API as the owner, in the first workspace; a failure throws with its status and body. */
export function parleyAdmin(t: TestServer): Client<typeof APIS.admin.operations> {
  return parleyClient(t.url, APIS.admin, {
    [HEADERS.authorization]: `Bearer ${t.token}`,
    [HEADERS.workspaceId]: t.workspaceId,
  });
}
