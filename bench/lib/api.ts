// Parley's APIs as the benchmarks call them: the contract's clients over fetch for the setup, and the
// wire requests of the contract's operations for the load generators, which send them on connections
// of their own. No path is written here: each comes from its operation's spec.
import { APIS, mountOf } from '../../src/contract/apis.ts';
import { callOf, clientOf, requestOf, specOf, targetOf } from '../../src/contract/client.ts';
import type { Client, InputOf, WireRequest } from '../../src/contract/client.ts';
import type { OperationSpec } from '../../src/contract/operation.ts';

/**
 * The client of one API at `base` (the server's origin and the API's mount), with these headers on
 * every request; anything but a 2xx throws, naming the request and the answer.
 */
export function clientAt<Ops extends readonly OperationSpec[]>(
  base: string,
  operations: Ops,
  headers: Record<string, string>,
): Client<Ops> {
  return clientOf(operations, async (wire) => {
    const res = await fetch(`${base}${targetOf(wire)}`, {
      method: wire.method,
      headers: {
        ...headers,
        ...wire.headers,
        ...(wire.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(wire.body !== undefined && { body: JSON.stringify(wire.body) }),
    });
    const text = await res.text();
    if (!res.ok) {
      const sent = JSON.stringify(wire.body ?? '').slice(0, 300);
      throw new Error(`${wire.method} ${targetOf(wire)} ${sent} answered ${res.status}: ${text}`);
    }
    return text ? (JSON.parse(text) as unknown) : {};
  });
}

/** The Admin API, Runtime, Files, Tables and Cognitive APIs of a server, with these credentials. */
export const adminApi = (url: string, headers: Record<string, string>) =>
  clientAt(`${url}${mountOf(APIS.admin)}`, APIS.admin.operations, headers);
export const filesApi = (url: string, headers: Record<string, string>) =>
  clientAt(`${url}${mountOf(APIS.files)}`, APIS.files.operations, headers);
export const tablesApi = (url: string, headers: Record<string, string>) =>
  clientAt(`${url}${mountOf(APIS.tables)}`, APIS.tables.operations, headers);

/** One call as a raw connection sends it: its method, its whole path (mount, path, query) and its body. */
export interface RawCall {
  method: WireRequest['method'];
  path: string;
  body: Record<string, unknown> | undefined;
}

/** The raw call of the operation `id` of an API mounted at `mount` (a path: `/v1/chat`, `/chat/{id}`). */
export function rawCall<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']>(
  mount: string,
  operations: Ops,
  id: Id,
  input: InputOf<Ops, Id>,
): RawCall {
  const wire = callOf(operations, id, input);
  return { method: wire.method, path: `${mount}${targetOf(wire)}`, body: wire.body };
}

export { APIS, mountOf };

/**
 * The whole path of the operation `id` (mount, path, and the query of what `fields` give) for a load
 * generator that writes each request's body itself.
 */
export function pathOf<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']>(
  mount: string,
  operations: Ops,
  id: Id,
  fields: Partial<InputOf<Ops, Id>>,
): string {
  return `${mount}${targetOf(requestOf(specOf(operations, id), fields))}`;
}
