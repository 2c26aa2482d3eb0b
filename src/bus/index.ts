import type { LiveBus } from '../domain/live/conversation-log.ts';
import { loadSignal } from '../domain/live/conversation-log.ts';
import type { Store } from '../store/index.ts';
import { MemoryBus } from './memory.ts';
import { PostgresBus } from './postgres.ts';

export interface BusConfig {
  redisUrl: string | undefined;
  postgresUrl: string | undefined;
}

/**
 * Redis when configured; otherwise Postgres LISTEN/NOTIFY when the store is Postgres (several processes
 * may share it); otherwise in-process (SQLite: one process).
 */
export async function openBus(
  config: BusConfig,
  store: Store,
  onError: (err: unknown) => void,
): Promise<LiveBus> {
  const load = (conversationId: string, seq: number) => loadSignal(store, conversationId, seq);
  if (config.redisUrl) {
    // Loaded only when Redis is configured: most servers never need the client.
    const { RedisBus } = await import('./redis.ts');
    return RedisBus.connect(config.redisUrl, load, onError);
  }
  if (config.postgresUrl) return PostgresBus.connect(config.postgresUrl, load, onError);
  return new MemoryBus();
}
