import type { Static } from 'typebox';
import type { HttpMethod, OperationSpec } from './operation.ts';
import { fillPath, wireText } from './path.ts';

/** One call as it goes on the wire, relative to its API's mount: the transport adds the rest. */
export interface WireRequest {
  readonly method: HttpMethod;
  /** With its path parameters filled in, URL-encoded. */
  readonly path: string;
  /** Encoded, without its `?`; empty when there is none. */
  readonly query: string;
  /** The JSON body; undefined for an operation that reads none (GET, DELETE). */
  readonly body: Record<string, unknown> | undefined;
  /** The headers that are arguments of the operation; credentials are the transport's. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Sends a request and answers the body of its success; it throws on a failure, in whatever form its
 * caller wants (the console's ApiError, the CLI's CliError).
 */
export type Transport = (request: WireRequest) => Promise<unknown>;

type Input<Op extends OperationSpec> = Static<Op['input']>;
type Output<Op extends OperationSpec> = Static<Op['response']>;

/** The spec of the operation `Id` of a table. */
type SpecOf<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']> = Extract<
  Ops[number],
  { readonly id: Id }
>;
/** What the operation `Id` of a table takes. */
export type InputOf<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']> = Input<
  SpecOf<Ops, Id>
>;
/** What the operation `Id` of a table answers. */
export type OutputOf<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']> = Output<
  SpecOf<Ops, Id>
>;

/** An operation as a method: the input may be left out when none of its fields is required. */
type Call<Op extends OperationSpec> =
  Record<never, never> extends Input<Op>
    ? (input?: Input<Op>) => Promise<Output<Op>>
    : (input: Input<Op>) => Promise<Output<Op>>;

/** A method per operation, named by its operationId, taking its input and answering its response. */
export type Client<Ops extends readonly OperationSpec[]> = {
  readonly [Op in Ops[number] as Op['id']]: Call<Op>;
};

/** The spec of the operation `id` of a table: what a client reads of it besides calling it (a field's bounds). */
export function specOf<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']>(
  operations: Ops,
  id: Id,
): SpecOf<Ops, Id> {
  const spec = operations.find((op): op is SpecOf<Ops, Id> => op.id === id);
  if (!spec) throw new TypeError(`no operation ${id}`);
  return spec;
}

/**
 * A client of an API's operations: each method splits its input into the path, the query, the body and
 * the headers as the operation declares them, and hands the request to `transport`.
 */
export function clientOf<const Ops extends readonly OperationSpec[]>(
  operations: Ops,
  transport: Transport,
): Client<Ops> {
  const methods: Record<string, (input?: Record<string, unknown>) => Promise<unknown>> = {};
  for (const op of operations) methods[op.id] = (input = {}) => transport(requestOf(op, input));
  // The one cast of the client: the transport answers what the server sent, which the contract types.
  return methods as Client<Ops>;
}

/** The wire request of one call of `op`: each of the input's fields in the part that declares it. */
export function requestOf(op: OperationSpec, input: Record<string, unknown>): WireRequest {
  const fieldsOf = (part: { properties: object }) =>
    Object.fromEntries(
      Object.keys(part.properties).flatMap((name) =>
        input[name] === undefined ? [] : [[name, input[name]]],
      ),
    );
  return {
    method: op.method,
    path: fillPath(op.path, fieldsOf(op.params)),
    query: encodeQuery(fieldsOf(op.query)),
    body: op.body && fieldsOf(op.body),
    headers: Object.fromEntries(Object.entries(fieldsOf(op.headers)).map(([k, v]) => [k, wireText(v)])),
  };
}

/**
 * One call of the operation `id` as its wire request, typed by its spec: for callers that send it their
 * own way (a load generator's raw connections, an EventSource). Relative to the API's mount.
 */
export function callOf<Ops extends readonly OperationSpec[], Id extends Ops[number]['id']>(
  operations: Ops,
  id: Id,
  input: InputOf<Ops, Id>,
): WireRequest {
  return requestOf(specOf(operations, id), input);
}

/** A request's path and query as one target: `/bots?pageSize=100`. */
export const targetOf = (request: WireRequest): string =>
  request.query === '' ? request.path : `${request.path}?${request.query}`;

/**
 * A query as `@botpress/client` sends it (and the server parses it): repeated keys for arrays, `key.k=v`
 * for maps, nothing for undefined.
 */
export function encodeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  const add = (key: string, value: unknown): void => {
    if (value === undefined) return;
    if (Array.isArray(value)) for (const item of value) add(key, item);
    else if (typeof value === 'object' && value !== null)
      for (const [k, v] of Object.entries(value)) add(`${key}.${k}`, v);
    else params.append(key, wireText(value));
  };
  for (const [key, value] of Object.entries(query)) add(key, value);
  return params.toString();
}

/** A page of a list operation's answer: its items under their key, and the token of the next page. */
type Page<K extends string, Item> = { readonly [P in K]: readonly Item[] } & {
  readonly meta: { readonly nextToken?: string | undefined };
};

/**
 * Every item of a list operation, page after page, until `max` items (then `complete` is false) or the
 * last page: `collect(client.listBots, 'bots', {})`.
 */
export async function collect<In extends { nextToken?: string } | undefined, K extends string, Item>(
  // `In` includes undefined when the list's input may be left out: the input given never is.
  list: (input: In) => Promise<Page<K, Item>>,
  key: K,
  input: NoInfer<Exclude<In, undefined>>,
  max = Number.POSITIVE_INFINITY,
): Promise<{ items: Item[]; complete: boolean }> {
  const items: Item[] = [];
  let nextToken: string | undefined;
  do {
    const page = await list(nextToken === undefined ? input : { ...input, nextToken });
    items.push(...page[key]);
    nextToken = page.meta.nextToken;
  } while (nextToken !== undefined && items.length < max);
  return { items, complete: nextToken === undefined };
}
