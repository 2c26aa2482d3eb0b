// Every route the server serves is declared in /openapi.json, the hand-routed streams included (the Chat
// API's and the webchat's listeners, the Cognitive NDJSON stream, the file contents, the webhook
// ingress): a route added outside the contract, or without its OpenAPI entry, fails here. Only the
// static pages named below are left out, each with its reason.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonValidator, serializerFor, textValidator } from '../src/handlers/validation.ts';
import { operationsOf, readOpenApi } from './helpers/openapi.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';

interface OpenApi {
  paths: Record<string, Record<string, { operationId?: string }>>;
}

/** Routes that are pages and files for browsers, not operations of an API. */
const NOT_OPERATIONS: { path: RegExp; why: string }[] = [
  { path: /^\/docs(\/|$)/, why: 'the OpenAPI viewer (@fastify/swagger-ui) and its assets' },
  { path: /^\/console(\/|$)/, why: "the console's page and its hashed assets" },
  { path: /^\/$/, why: 'a redirection to the console' },
  { path: /^\/webchat\/v1\//, why: "the webchat's embed script and its assets" },
  { path: /^\/s\/:_$/, why: "the webchat's share page" },
  { path: /^\/dev-tunnel\/:_$/, why: "`bp dev`'s tunnel, a WebSocket of the CLI's tunnel protocol" },
];

/** A path with its parameters' names left out: `{id}` in OpenAPI is `:id` in Fastify, and `{*}` is `*`. */
const canonical = (path: string) =>
  path
    .replaceAll('{*}', '*')
    .replace(/\{[^}]+\}/g, ':_')
    .replace(/:[A-Za-z]+/g, ':_');

/**
 * The CORS preflights' own routes: `OPTIONS {prefix}*` of the channels' plugin and the one below it
 * (`api/cors.ts`), and the contents' (`api/files/content.ts`).
 */
const PREFLIGHTS = new Set([
  'OPTIONS /chat/:_*',
  'OPTIONS /chat/:_/*',
  'OPTIONS /webchat/:_*',
  'OPTIONS /webchat/:_/*',
  'OPTIONS /file-content/*',
]);

/** What Fastify adds itself (the HEAD of every GET) and the CORS plugins' preflight answers. */
function isImplied(route: string, routes: Set<string>): boolean {
  const [method = '', path = ''] = route.split(' ');
  if (method === 'HEAD') return routes.has(`GET ${path}`);
  return PREFLIGHTS.has(route);
}

describe('/openapi.json declares every route the server serves', () => {
  let t: TestServer;
  let served: Set<string>;
  let declared: Set<string>;

  before(async () => {
    t = await startTestServer({ name: 'sqlite' });
    served = new Set(t.server.app.servedRoutes.map(({ method, url }) => `${method} ${canonical(url)}`));
    const doc = await readOpenApi<OpenApi>(t.url);
    // Only what is declared as an operation: @fastify/swagger lists a route without a schema too.
    declared = new Set(
      operationsOf(doc.paths)
        .filter(({ op }) => op.operationId !== undefined)
        .map(({ method, path }) => `${method} ${canonical(path)}`),
    );
  });
  after(() => t.close());

  test('every served route is an operation of the document, or a page named above', () => {
    const undeclared = [...served].filter(
      (route) =>
        !declared.has(route) &&
        !isImplied(route, served) &&
        !NOT_OPERATIONS.some(({ path }) => path.test(route.split(' ')[1] ?? '')),
    );
    assert.deepEqual(undeclared, []);
  });

  test('every operation of the document is served', () => {
    assert.deepEqual(
      [...declared].filter((route) => !served.has(route)),
      [],
    );
  });

  test('every schema a route declares compiles (the server compiles each on its first use)', () => {
    const isSchema = (part: unknown): part is object => typeof part === 'object' && part !== null;
    let compiled = 0;
    for (const { method, url, schema } of t.server.app.servedRoutes) {
      if (!schema) continue;
      const where = `${method} ${url}`;
      const { body, querystring, params, headers, response } = schema;
      if (isSchema(body)) assert.doesNotThrow(() => jsonValidator(body), `${where}: body`);
      for (const [name, part] of Object.entries({ querystring, params, headers }))
        if (isSchema(part)) assert.doesNotThrow(() => textValidator(part), `${where}: ${name}`);
      for (const [status, answer] of Object.entries(isSchema(response) ? response : {}))
        if (isSchema(answer)) assert.doesNotThrow(() => serializerFor(answer), `${where}: ${status}`);
      compiled++;
    }
    // Every operation of every API declares its schemas.
    assert.ok(compiled > 200, `${compiled} routes with schemas`);
  });
});
