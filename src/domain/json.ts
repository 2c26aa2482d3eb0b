/** JSON documents are stored as text in both dialects. */
export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

/** Applies a map update where `null` removes a key. */
export function mergeMap<T>(
  current: Record<string, T>,
  changes: Record<string, T | null> | undefined,
): Record<string, T> {
  if (!changes) return current;
  const next = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** A map without its `null` values (what a create does with a change map). */
export function withoutNulls<T>(map: Record<string, T | null> | undefined): Record<string, T> {
  return mergeMap({}, map);
}
