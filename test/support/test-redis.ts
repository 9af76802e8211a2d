import { randomBytes } from 'node:crypto';
import { createRedisClient, KeyBuilder, type RedisClient } from '@flash-sale/redis';
import type { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A Redis client with a random key prefix, so tests never collide; `cleanup` deletes its keys. */
export function createTestRedis(): { redis: RedisClient; keys: KeyBuilder; cleanup(): Promise<void> } {
  const prefix = `fs-test-${randomBytes(4).toString('hex')}`;
  const redis = createRedisClient({ url: TEST_REDIS_URL, clusterNodes: [] });
  return {
    redis,
    keys: new KeyBuilder(prefix),
    async cleanup() {
      let cursor = '0';
      do {
        const [next, found] = await (redis as Redis).scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (found.length) await redis.del(...found);
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}
