import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import type { Operation } from '../handlers/operation.ts';
import { errorResponses } from '../contract/models.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Whether the route only reads or also writes: what a role that may only read may call. */
    access?: 'read' | 'write';
    /** It queues a turn of the bot (a channel's turn table, `channelCaller`): admission decides before its user is read. */
    queuesTurn?: boolean;
  }
}

/** True when a schema of properties declares none: the route then gets no schema for that part. */
const declaresNone = (schema: { properties: object }) => Object.keys(schema.properties).length === 0;

/**
 * One route per operation of a table: its schemas (validation, the answer's serialization, the
 * OpenAPI entry) and a handler that runs the operation as the actor the API authenticated. `config`
 * goes on each route: the authentication a table's actor needs where it is not its API's default.
 */
export function routeOperations<Actor>(
  app: FastifyInstance,
  operations: readonly Operation<Actor>[],
  actorOf: (request: FastifyRequest) => Actor,
  config: FastifyContextConfig = {},
): void {
  for (const op of operations) {
    app.route({
      method: op.method,
      url: op.path,
      config: {
        ...config,
        access: op.access,
        ...(op.botItself && { botItself: true }),
      },
      schema: {
        operationId: op.id,
        tags: [op.tag],
        summary: op.summary,
        ...(op.description !== undefined && { description: op.description }),
        ...(!declaresNone(op.params) && { params: op.params }),
        ...(!declaresNone(op.query) && { querystring: op.query }),
        ...(!declaresNone(op.headers) && { headers: op.headers }),
        ...(op.body && { body: op.body }),
        response: { [op.status]: op.response, ...errorResponses },
      },
      // A POST without a body is one with no fields: the schema then names what is missing.
      ...(op.body && {
        preValidation: async (request: FastifyRequest) => {
          request.body ??= {};
        },
      }),
      handler: async (request, reply) => {
        // Only what each part's schema declares, so every argument has been validated; path
        // parameters last: a body field cannot stand in for the resource the path names.
        const input = {
          ...(op.body && declaredFields(op.body, request.body)),
          ...declaredFields(op.query, request.query),
          ...declaredHeaders(op, request),
          ...declaredFields(op.params, request.params),
        };
        const answer = await op.run(app.domain, actorOf(request), input);
        return reply.code(op.status).send(answer);
      },
    });
  }
}

/** The headers an operation declares as arguments (the others, credentials included, are not arguments). */
function declaredHeaders<Actor>(op: Operation<Actor>, request: FastifyRequest): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(op.headers.properties).flatMap((name) =>
      request.headers[name] === undefined ? [] : [[name, request.headers[name]]],
    ),
  );
}

/** The fields of a request part that its schema declares (a part without a schema declares none). */
function declaredFields(schema: { properties: object }, part: unknown): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (typeof part !== 'object' || part === null) return fields;
  for (const name of Object.keys(schema.properties)) {
    // Own fields only: a name like `constructor` must not read what every object inherits.
    if (Object.hasOwn(part, name)) fields[name] = Reflect.get(part, name);
  }
  return fields;
}
