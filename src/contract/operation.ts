import { Type } from 'typebox';
import type { Static, TObject, TProperties, TSchema } from 'typebox';
import type { Domain } from '../domain/index.ts';
import type { Access } from '../domain/workspace/roles.ts';
import type { Page } from '../domain/shared/pagination.ts';
import { listOf, PageQuery } from './schemas.ts';

/** No properties: the default of an operation part it does not declare. */
type NoFields = Record<never, never>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type { Access };

/** What every operation declares besides its answer. */
interface Declaration<
  P extends TProperties,
  Q extends TProperties,
  B extends TProperties,
  H extends TProperties = NoFields,
> {
  /** The operationId: the method name of the official clients and of the `client` bot code gets. */
  id: string;
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
}

/** The arguments of an operation as one object: its path, query, body and header fields together. */
export type InputOf<
  P extends TProperties,
  Q extends TProperties,
  B extends TProperties,
  H extends TProperties = NoFields,
> = Static<TObject<P & Q & B & H>>;

export interface OperationDefinition<
  Actor,
  P extends TProperties,
  Q extends TProperties,
  B extends TProperties,
  R extends TSchema,
  H extends TProperties = NoFields,
> extends Declaration<P, Q, B, H> {
  response: R;
  handler(domain: Domain, actor: Actor, input: InputOf<P, Q, B, H>): Promise<Static<R>>;
}

export interface ListDefinition<
  Actor,
  P extends TProperties,
  Q extends TProperties,
  I extends TSchema,
> extends Omit<Declaration<P, Q, TProperties>, 'body' | 'strictBody' | 'method' | 'access'> {
  /** The key of the items in the answer: `{ [key]: items, meta: { nextToken } }`. */
  key: string;
  /** False: the client chooses no page size (the Chat API's lists take only `nextToken`). */
  pageSize?: boolean;
  item: I;
  handler(
    domain: Domain,
    actor: Actor,
    input: InputOf<P, Q & typeof PageQuery, NoFields>,
  ): Promise<Page<Static<I>>>;
}

/**
 * One operation of an API, declared once: the HTTP routes (validation, types, OpenAPI) and the
 * in-process client of bot code are both generated from it, so they cannot drift apart.
 */
export interface Operation<Actor> {
  readonly id: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly access: Access;
  readonly tag: string;
  readonly summary: string;
  readonly description: string | undefined;
  readonly status: 200 | 201;
  readonly params: TObject;
  readonly query: TObject;
  /** Undefined: the operation reads no body (GET, DELETE). */
  readonly body: TObject | undefined;
  readonly headers: TObject;
  /** Every argument in one object, as a client passes them. */
  readonly input: TObject;
  readonly response: TSchema;
  /**
   * Runs the operation on arguments that passed `input` (or the HTTP parts); answers what `response`
   * describes. Only the declared arguments reach the handler: an undeclared query parameter or body
   * field is ignored, never passed on to the domain (where it could, say, add an unchecked filter).
   */
  run(domain: Domain, actor: Actor, input: Record<string, unknown>): Promise<unknown>;
}

function declaredOnly(given: Record<string, unknown>, declared: { input: TObject }): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(declared.input.properties)) {
    if (given[key] !== undefined) input[key] = given[key];
  }
  return input;
}

function shape<P extends TProperties, Q extends TProperties, B extends TProperties, H extends TProperties>(
  declaration: Declaration<P, Q, B, H>,
  response: TSchema,
) {
  const params = declaration.params ?? {};
  const query = declaration.query ?? {};
  const body = declaration.body;
  const headers = declaration.headers ?? {};
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
    params: Type.Object(params),
    query: Type.Object(query),
    body: hasBody
      ? Type.Object(body ?? {}, declaration.strictBody ? { additionalProperties: false } : {})
      : undefined,
    headers: Type.Object(headers),
    input: Type.Object({ ...params, ...query, ...body, ...headers }),
    response,
  };
}

/**
 * The constructors of one API's operations, for the actor its routes authenticate (a bot, a chat
 * user...). The actor is fixed here so that each declaration's own types are inferred.
 */
export function operationsFor<Actor>() {
  /** Declares an operation whose handler answers its response object. */
  function operation<
    P extends TProperties = NoFields,
    Q extends TProperties = NoFields,
    B extends TProperties = NoFields,
    R extends TSchema = TSchema,
    H extends TProperties = NoFields,
  >(definition: OperationDefinition<Actor, P, Q, B, R, H>): Operation<Actor> {
    const declared = shape(definition, definition.response);
    return {
      ...declared,
      // The arguments were validated against the schemas built from these very properties.
      run: (domain, actor, input) =>
        definition.handler(domain, actor, declaredOnly(input, declared) as InputOf<P, Q, B, H>),
    };
  }

  /**
   * Declares a paginated list: `pageSize` and `nextToken` in its query, and the answer
   * `{ [key]: page.items, meta: { nextToken } }` built here, once, from the handler's page.
   */
  function listOperation<
    P extends TProperties = NoFields,
    Q extends TProperties = NoFields,
    I extends TSchema = TSchema,
  >(definition: ListDefinition<Actor, P, Q, I>): Operation<Actor> {
    const declaration = {
      ...definition,
      method: 'GET' as const,
      access: 'read' as const,
      query: {
        ...(definition.pageSize === false ? { nextToken: PageQuery.nextToken } : PageQuery),
        ...definition.query,
      },
    };
    return {
      ...shape(declaration, listOf(definition.key, definition.item)),
      run: async (domain, actor, input) => {
        const page = await definition.handler(
          domain,
          actor,
          input as InputOf<P, Q & typeof PageQuery, NoFields>,
        );
        return { [definition.key]: page.items, meta: { nextToken: page.nextToken } };
      },
    };
  }

  return { operation, listOperation };
}
