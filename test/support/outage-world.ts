import type { DataSource } from 'typeorm';
import { closeWithin } from './bounded-close';
import { PrivateRedisServer } from './private-redis';
import { createTestEnv, openDatabase, type TestEnv } from './test-env';

/**
 * One outage test's world, made afresh for each test: a redis-server of its own with its append-only
 * file (the test kills it, and brings it back from the file, from nothing or from an older copy), the
 * test environment on it, and the test database for assertions straight from MySQL.
 */
export interface OutageWorld {
  redis: PrivateRedisServer;
  testEnv: TestEnv;
  db: DataSource;
}

/**
 * Short repair intervals, so that the books close by themselves within seconds of an outage: the
 * hand-off sweep and reconciliation every second, and a lost incarnation's units settled a second after
 * the loss (the late writes it waits for are the test's own, soon done).
 */
export const REPAIR_EVERY_SECOND = {
  RECONCILE_INTERVAL_MS: '1000',
  RECOVERY_INTERVAL_MS: '1000',
  RECOVERY_GRACE_MS: '1000',
} as const satisfies Record<string, string>;

/**
 * Starts one. `env` overrides the environment's variables (REDIS_URL is the private Redis's); as a
 * function of that Redis, they are made once it runs (a REDIS_URL through a proxy to it).
 */
export async function startOutageWorld(
  env: Record<string, string> | ((redis: PrivateRedisServer) => Promise<Record<string, string>>),
): Promise<OutageWorld> {
  const redis = await PrivateRedisServer.start({ persistent: true });
  const overrides = typeof env === 'function' ? await env(redis) : env;
  const testEnv = await createTestEnv({ REDIS_URL: redis.url, ...overrides });
  const db = await openDatabase(testEnv.config);
  return { redis, testEnv, db };
}

/**
 * Closes the apps the test started on the world (10 s at most: after their Redis was killed a shutdown
 * may wait on it), then the Redis, the database and the environment.
 */
export async function closeOutageWorld(world: OutageWorld, ...apps: (Promise<unknown> | undefined)[]): Promise<void> {
  await closeWithin(10_000, ...apps);
  await world.redis.destroy();
  await world.db.destroy();
  await world.testEnv.cleanup();
}
