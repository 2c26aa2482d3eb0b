// The contract's clients over the console's transport (http.ts): same origin, the session's credentials
// unless a call says otherwise.
import { APIS, mountOf } from '../../../src/contract/apis.ts';
import type { Api } from '../../../src/contract/apis.ts';
import { clientOf, specOf, targetOf } from '../../../src/contract/client.ts';
import type { Client, Transport } from '../../../src/contract/client.ts';
import { request } from './http.ts';
import type { RequestOptions } from './http.ts';

/** Calls to one API at its mount, with these options on every request (credentials, headers, a signal). */
function transport(mount: string, options: Omit<RequestOptions, 'body' | 'query'>): Transport {
  return (wire) =>
    request<unknown>(wire.method, `${mount}${targetOf(wire)}`, {
      ...options,
      headers: { ...options.headers, ...wire.headers },
      ...(wire.body !== undefined && { body: wire.body }),
    });
}

/** A client of an API, at its mount (`params` fill the mount's own parameters). */
export function apiClient<Ops extends Api['operations']>(
  api: { prefix: string; operations: Ops },
  options: Omit<RequestOptions, 'body' | 'query'> = {},
  params: Record<string, string> = {},
): Client<Ops> {
  return clientOf(api.operations, transport(mountOf(api, params), options));
}

export { APIS };

/** The most items a screen lists of one list, page after page: beyond it, it says the list goes on. */
export const MAX_LISTED = 1000;

/** A string field's `maxLength`, as the server checks it. */
function maxLengthOf(schema: object): number | undefined {
  const value: unknown = Reflect.get(schema, 'maxLength');
  return typeof value === 'number' ? value : undefined;
}

const admin = APIS.admin.operations;

/** The longest value of the Admin API's fields the console's forms take: their specs' own bounds. */
export const adminFields = {
  botName: maxLengthOf(specOf(admin, 'createBot').input.properties.name),
  tokenNote: maxLengthOf(specOf(admin, 'createPersonalAccessToken').input.properties.note),
  keyNote: maxLengthOf(specOf(admin, 'createBotApiKey').input.properties.note),
  webhookUrl: maxLengthOf(specOf(admin, 'createWebhookSubscription').input.properties.url),
};
