/** Every timestamp Parley stores and sends: ISO 8601, UTC, millisecond precision, `Z` suffix. */
export function nowIso(): string {
  return new Date().toISOString();
}
