/**
 * Why a message received on the bus was dropped unread:
 * - `unsigned`: not a sealed message at all (no signature);
 * - `forged`: a signature that this deployment's secret did not make;
 * - `malformed`: too large to be one, or signed but not a batch of signals;
 * - `stale`: signed, but sent too long ago (or too far ahead of this clock);
 * - `replayed`: signed, and received before.
 */
export const BUS_REJECTIONS = ['unsigned', 'forged', 'malformed', 'stale', 'replayed'] as const;
export type BusRejection = (typeof BUS_REJECTIONS)[number];
