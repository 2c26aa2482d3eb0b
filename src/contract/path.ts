/** A scalar as the wire writes it in a path, a query or a header; anything else as its JSON. */
export function wireText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : JSON.stringify(value);
}

/** A path with its `:name` parameters replaced by their values, URL-encoded; a missing one is an error. */
export function fillPath(path: string, params: Record<string, unknown>): string {
  return path.replace(/:([A-Za-z]+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${path}: no value for the path parameter ${name}`);
    return encodeURIComponent(wireText(value));
  });
}
