import { Type } from 'typebox';
import type { TObject, TProperties, TSchema } from 'typebox';
import type { Access } from '../domain/workspace/access.ts';
import { listOf, PageQuery } from './schemas.ts';

/** No properties: the default of an operation part it does not declare. */
type NoFields = Record<never, never>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type { Access };

/** What every operation declares besides its answer. */
interface Declaration<
  I extends string,
  P extends TProperties,
  Q extends TProperties,
  B extends TProperties,
  H extends TProperties,
> {
  /** The operationId: the method name of the official clients and of the `client` bot code gets. */
  id: I;
  method: HttpMethod;
  /** Relative to the API's prefix, with `:name` path parameters. */
  path: string;
  access: Access;
  /** The OpenAPI tag that groups it. */
  tag: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers that are arguments (lower-case names), e.g. copyFile's `x-destination-bot-id`. */
  headers?: H;
  /** The body may carry no property but its own (the action call). */
  strictBody?: boolean;
  /** Status of a success: 201 for the creates, as the hosted API answers. */
  status?: 200 | 201;
  /**
   * A bot's own API key may call it too, on that bot only (its `id` path parameter), with a viewer's
   * rights: what bot code reads of itself (`@botpress/cognitive` reads its bot's integrations).
   */
  botItself?: boolean;
}

/**
 * One operation of an API as its callers see it, declared once and with no server in it: the HTTP
 * routes (validation, serialization, OpenAPI), bot code's in-process client and any typed client are
 * made from it. Its types are kept, so `Static<typeof spec.input>` is what a call takes and
 * `Static<typeof spec.response>` what it answers.
 */
export interface OperationSpec<
  I extends string = string,
  P extends TProperties = TProperties,
  Q extends TProperties = TProperties,
  B extends TProperties = TProperties,
  H extends TProperties = TProperties,
  R extends TSchema = TSchema,
> {
  readonly id: I;
  readonly method: HttpMethod;
  readonly path: string;
  readonly access: Access;
  readonly tag: string;
  readonly summary: string;
  readonly description: string | undefined;
  readonly status: 200 | 201;
  /** See the declaration's. */
  readonly botItself: boolean;
  readonly params: TObject<P>;
  readonly query: TObject<Q>;
  /** Undefined: the operation reads no body (GET, DELETE). */
  readonly body: TObject<B> | undefined;
  readonly headers: TObject<H>;
  /** Every argument in one object, as a client passes them. */
  readonly input: TObject<P & Q & B & H>;
  readonly response: R;
}

/** A paginated list: its answer is `{ [key]: items, meta: { nextToken } }`, from a page of `item`s. */
export interface ListSpec<
  I extends string = string,
  P extends TProperties = TProperties,
  Q extends TProperties = TProperties,
  K extends string = string,
  Item extends TSchema = TSchema,
> extends OperationSpec<I, P, Q, NoFields, NoFields, ReturnType<typeof listOf<K, Item>>> {
  /** The key of the items in the answer. */
  readonly key: K;
  readonly item: Item;
}

interface ListDeclaration<
  I extends string,
  P extends TProperties,
  Q extends TProperties,
  K extends string,
  Item extends TSchema,
> extends Omit<Declaration<I, P, Q, NoFields, NoFields>, 'body' | 'strictBody' | 'method' | 'access'> {
  key: K;
  item: Item;
}

/** A part the operation does not declare has no fields: its type parameter is then `NoFields`, the default. */
function fields<T extends TProperties>(part: T | undefined): T {
  return part ?? ({} as T);
}

function spec<
  I extends string,
  P extends TProperties,
  Q extends TProperties,
  B extends TProperties,
  H extends TProperties,
  R extends TSchema,
>(declaration: Declaration<I, P, Q, B, H>, response: R): OperationSpec<I, P, Q, B, H, R> {
  const params = fields(declaration.params);
  const query = fields(declaration.query);
  const body = fields(declaration.body);
  const headers = fields(declaration.headers);
  const hasBody = declaration.method !== 'GET' && declaration.method !== 'DELETE';
  return {
    id: declaration.id,
    method: declaration.method,
    path: declaration.path,
    access: declaration.access,
    tag: declaration.tag,
    summary: declaration.summary,
    description: declaration.description,
    status: declaration.status ?? 200,
    botItself: declaration.botItself ?? false,
    params: Type.Object(params),
    query: Type.Object(query),
    body: hasBody
      ? Type.Object(body, declaration.strictBody ? { additionalProperties: false } : {})
      : undefined,
    headers: Type.Object(headers),
    input: Type.Object({ ...params, ...query, ...body, ...headers }),
    response,
  };
}

/** Declares an operation that answers its response object. */
export function operation<
  I extends string,
  P extends TProperties = NoFields,
  Q extends TProperties = NoFields,
  B extends TProperties = NoFields,
  R extends TSchema = TSchema,
  H extends TProperties = NoFields,
>(declaration: Declaration<I, P, Q, B, H> & { response: R }): OperationSpec<I, P, Q, B, H, R> {
  return spec(declaration, declaration.response);
}

/** The query of a list whose client chooses no page size: only the token of the next page. */
const NextTokenQuery = { nextToken: PageQuery.nextToken };

function list<
  I extends string,
  P extends TProperties,
  Q extends TProperties,
  K extends string,
  Item extends TSchema,
  PQ extends TProperties,
>(declaration: ListDeclaration<I, P, Q, K, Item>, pageQuery: PQ): ListSpec<I, P, PQ & Q, K, Item> {
  const query = { ...pageQuery, ...fields(declaration.query) };
  return {
    ...spec(
      { ...declaration, method: 'GET', access: 'read', query },
      listOf(declaration.key, declaration.item),
    ),
    key: declaration.key,
    item: declaration.item,
  };
}

/**
 * Declares a paginated list: `pageSize` and `nextToken` in its query (`pageSize: false`: `nextToken`
 * only, as the Chat API's lists), and the answer `{ [key]: items, meta: { nextToken } }`, which the
 * binding makes once from the page its handler answers.
 */
export function listOperation<
  I extends string,
  K extends string,
  Item extends TSchema,
  P extends TProperties = NoFields,
  Q extends TProperties = NoFields,
>(
  declaration: ListDeclaration<I, P, Q, K, Item> & { pageSize: false },
): ListSpec<I, P, typeof NextTokenQuery & Q, K, Item>;
export function listOperation<
  I extends string,
  K extends string,
  Item extends TSchema,
  P extends TProperties = NoFields,
  Q extends TProperties = NoFields,
>(
  declaration: ListDeclaration<I, P, Q, K, Item> & { pageSize?: true },
): ListSpec<I, P, typeof PageQuery & Q, K, Item>;
export function listOperation<
  I extends string,
  K extends string,
  Item extends TSchema,
  P extends TProperties = NoFields,
  Q extends TProperties = NoFields,
>(
  declaration: ListDeclaration<I, P, Q, K, Item> & { pageSize?: boolean },
): ListSpec<I, P, typeof NextTokenQuery & Q, K, Item> | ListSpec<I, P, typeof PageQuery & Q, K, Item> {
  return declaration.pageSize === false ? list(declaration, NextTokenQuery) : list(declaration, PageQuery);
}
