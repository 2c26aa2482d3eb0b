import { Redis } from 'ioredis';

export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why Redis at `url` does not answer, or undefined when it does. */
async function redisProblem(url: string): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    client.disconnect();
  }
}

let cached: Promise<string | undefined> | undefined;

/**
 * Why the suites that need Redis (at TEST_REDIS_URL, default 127.0.0.1:6379) are skipped here, or
 * undefined when it answers. On CI (CI=true) Redis is required: an unreachable one fails the run.
 */
export function redisSkip(): Promise<string | undefined> {
  return (cached ??= (async () => {
    const problem = await redisProblem(testRedisUrl);
    if (problem && process.env.CI === 'true') {
      throw new Error(`CI=true requires Redis at ${testRedisUrl}, but: ${problem}`);
    }
    return problem && `Redis not reachable at ${testRedisUrl} (${problem})`;
  })());
}
