import { randomBytes } from 'node:crypto';
import {
  createRedisClient,
  HandoffStream,
  KeyBuilder,
  type RedisClient,
  type RedisConnectionConfig,
  ReservationScripts,
  SaleState,
} from '@flash-sale/redis';
import type { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Every key matching a `prefix:*` pattern, by SCAN; braces (a queue's hash tag) are matched literally. */
export async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  // SCAN's MATCH is a glob: escape the braces and brackets of a hash tag.
  const match = pattern.replace(/[{}[\]]/g, (c) => `\\${c}`);
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await (redis as Redis).scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  return keys;
}

/** Deletes every key matching each pattern (see scanKeys). */
export async function deleteKeys(redis: RedisClient, patterns: readonly string[]): Promise<void> {
  for (const pattern of patterns) {
    const keys = await scanKeys(redis, pattern);
    if (keys.length) await redis.del(...keys);
  }
}

/**
 * Resolves once `client` is ready: for a cluster client, once it has read the slot map. Commands wait for
 * that on their own; code that reads `Cluster.slots` itself (ReplicaAcks) does not, so a test that opens a
 * cluster client waits here before its first step.
 */
export async function untilReady(client: RedisClient, timeoutMs = 30_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`the Redis client was not ready within ${timeoutMs} ms (status ${client.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

/** A Redis client with a random key prefix, so tests never collide; `cleanup` deletes its keys. */
export function createTestRedis(): { redis: RedisClient; keys: KeyBuilder; cleanup(): Promise<void> } {
  const prefix = `fs-test-${randomBytes(4).toString('hex')}`;
  const redis = createRedisClient({ url: TEST_REDIS_URL, clusterNodes: [] });
  return {
    redis,
    keys: new KeyBuilder(prefix),
    async cleanup() {
      await deleteKeys(redis, [`${prefix}:*`]);
      redis.disconnect();
    },
  };
}

/** A sale's Redis as the apps reach it: one client and the repositories over it. */
export interface SaleRedisAccess {
  redis: RedisClient;
  keys: KeyBuilder;
  scripts: ReservationScripts;
  saleRedis: SaleState;
  handoff: HandoffStream;
}

/** Opens a client on the test's Redis with its key prefix, and the repositories the tests drive it with. */
export function openSaleRedis(config: RedisConnectionConfig & { keyPrefix: string }): SaleRedisAccess {
  const redis = createRedisClient(config);
  const keys = new KeyBuilder(config.keyPrefix);
  return {
    redis,
    keys,
    scripts: new ReservationScripts(redis, keys),
    saleRedis: new SaleState(redis, keys),
    handoff: new HandoffStream(redis, keys),
  };
}
