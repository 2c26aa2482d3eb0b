/**
 * On Postgres one pool of connections serves two kinds of work: requests, which arrive as fast as
 * clients send them, and turns, which answer what requests queued (at most the engine's concurrency at
 * once). Were both to wait in the pool's one line, a flood of requests would keep the turns waiting
 * behind them: each stored message then queues more work than the turns can take, and replies stop
 * (measured under held load: 8 replies a second for 400 messages a second offered).
 *
 * So requests may hold only part of the pool; the rest is kept for turns. Requests past their part wait
 * in a line of their own, outside the pool, and the turns' work finds a connection at once, or after the
 * few requests already admitted.
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/** The share of the pool kept for turns (at least one connection, unless the pool has only one). */
const TURN_SHARE = 1 / 3;

/** How many of `poolSize` connections requests may hold at once. */
export function requestConnections(poolSize: number): number {
  if (poolSize <= 1) return poolSize;
  return poolSize - Math.max(1, Math.floor(poolSize * TURN_SHARE));
}

/** `pool`, of which at most `max` connections are checked out at once; callers past it wait in order. */
export function cappedPool(pool: PostgresPool, max: number): PostgresPool {
  let out = 0;
  const waiting: (() => void)[] = [];
  const admitted = (): Promise<void> | undefined => {
    if (out < max) {
      out++;
      return undefined;
    }
    return new Promise((admit) => waiting.push(admit));
  };
  // The one who leaves hands its place to the first in line, so `out` counts both.
  const leave = () => {
    const next = waiting.shift();
    if (next) next();
    else out--;
  };
  // One wrapper per connection, so that Kysely sees the same connection each time it is checked out.
  const wrappers = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
  return {
    connect: async () => {
      await admitted();
      let client: PostgresPoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        leave();
        throw err;
      }
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        const inner = client;
        wrapper = {
          query: inner.query.bind(inner),
          release: () => {
            inner.release();
            leave();
          },
        };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/** `pool` for a second user that must not end it: the pool's owner does. */
export function sharedPool(pool: PostgresPool): PostgresPool {
  return { connect: () => pool.connect(), end: async () => {} };
}
