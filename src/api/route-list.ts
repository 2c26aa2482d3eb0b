import type { FastifyInstance, FastifySchema } from 'fastify';

/** A route as registered: its methods, its URL pattern (with its prefix) and its schemas. */
export interface ServedRoute {
  readonly method: string;
  readonly url: string;
  /** Compiled on first use (`api/app.ts`): `test/openapi-routes.test.ts` compiles each of them. */
  readonly schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Every route registered, as Fastify was given it: what `test/openapi-routes.test.ts` holds
     * against `/openapi.json` (Fastify's own listing, `printRoutes`, merges `/x*` and `/x/*`).
     */
    servedRoutes: readonly ServedRoute[];
  }
}

/** Records each route from now on, in every plugin: call it first. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: ServedRoute[] = [];
  app.decorate('servedRoutes', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method, url: route.url, schema: route.schema });
  });
}
