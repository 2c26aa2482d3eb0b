import type { Static, TObject, TSchema } from 'typebox';
import type { ListSpec, OperationSpec } from '../contract/operation.ts';
import type { Domain } from '../domain/index.ts';
import type { Page } from '../domain/shared/pagination.ts';

/** What a handler answers: a list's page of items (the binding wraps it), or the operation's answer. */
type AnswerOf<S extends OperationSpec> = S extends { readonly item: infer Item extends TSchema }
  ? Page<Static<Item>>
  : Static<S['response']>;

/** The handler of one operation, as the actor its routes authenticate: its arguments, as its spec declares them. */
export type HandlerOf<Actor, S extends OperationSpec> = (
  domain: Domain,
  actor: Actor,
  input: Static<S['input']>,
) => Promise<AnswerOf<S>>;

/** A handler for each operation of a table of specs, by operationId: none missing, none extra. */
export type Handlers<Actor, Specs extends readonly OperationSpec[]> = {
  readonly [S in Specs[number] as S['id']]: HandlerOf<Actor, S>;
};

/**
 * An operation bound to the domain, for the actor its routes authenticate: its spec, and how to run
 * it. The HTTP routes (api/operations.ts) and bot code's client (engine/bot-client.ts) run it alike.
 */
export interface Operation<Actor> extends OperationSpec {
  /**
   * Runs the operation on arguments that passed `input` (or the HTTP parts); answers what `response`
   * describes. Only the declared arguments reach the handler of an operation that is not a list: an
   * undeclared query parameter or body field is ignored, never passed on to the domain (where it could,
   * say, add an unchecked filter). A list's handler is given the arguments as they passed.
   */
  run(domain: Domain, actor: Actor, input: Record<string, unknown>): Promise<unknown>;
}

function isList(spec: OperationSpec): spec is ListSpec {
  return 'item' in spec;
}

function declaredOnly(given: Record<string, unknown>, declared: { input: TObject }): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(declared.input.properties)) {
    if (given[key] !== undefined) input[key] = given[key];
  }
  return input;
}

/** A list handler's answer, checked before it is wrapped (its type is the spec's page). */
function isPage(answer: unknown): answer is Page<unknown> {
  return typeof answer === 'object' && answer !== null && 'items' in answer && Array.isArray(answer.items);
}

/**
 * Binds a table of specs to their handlers, for the actor its routes authenticate: each operation
 * as the routes and bot code's client run it. A list's answer `{ [key]: items, meta: { nextToken } }`
 * is made here, once, from the page its handler answers.
 */
export function implement<Actor>() {
  return <const Specs extends readonly OperationSpec[]>(
    specs: Specs,
    handlers: NoInfer<Handlers<Actor, Specs>>,
  ): readonly Operation<Actor>[] => {
    // Each handler takes its own spec's input; as one table, an input none of them refuses (`never`):
    // each is given the arguments that passed the schemas built from its own spec's properties.
    const table: Readonly<Record<string, (domain: Domain, actor: Actor, input: never) => Promise<unknown>>> =
      handlers;
    return specs.map((spec): Operation<Actor> => {
      const handler = table[spec.id];
      if (!handler) throw new Error(`${spec.id} has no handler`);
      if (isList(spec)) {
        return {
          ...spec,
          run: async (domain, actor, input) => {
            const page = await handler(domain, actor, input as never);
            if (!isPage(page)) throw new Error(`${spec.id} answered no page`);
            return { [spec.key]: page.items, meta: { nextToken: page.nextToken } };
          },
        };
      }
      return {
        ...spec,
        run: (domain, actor, input) => handler(domain, actor, declaredOnly(input, spec) as never),
      };
    });
  };
}
