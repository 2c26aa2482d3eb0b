/** `/openapi.json` of a running server, as the type the suite reads it as. */
export async function readOpenApi<Doc>(serverUrl: string): Promise<Doc> {
  return (await (await fetch(`${serverUrl}/openapi.json`)).json()) as Doc;
}

/** Each operation of an OpenAPI document's paths, with its upper-case method and its path. */
export function operationsOf<Op>(paths: Record<string, Record<string, Op>>) {
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
}
