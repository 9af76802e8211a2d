import type { DataSource } from 'typeorm';
import type { ApiClient } from './api-client';
import { closeWithin } from './bounded-close';
import { PrivateRedisServer } from './private-redis';
import {
  startRedisCluster,
  type LocalRedisCluster,
  type RedisClusterOptions,
} from '../../scripts/lib/redis-cluster.mjs';
import { startStack, type RunningStack } from './running-stack';
import { createTestEnv, openDatabase, type TestEnv } from './test-env';
import { openSaleRedis, type SaleRedisAccess, untilReady } from './test-redis';

/** The real API (and worker) of one test file, ready once its `beforeAll` has run. */
export interface StackWorld extends SaleRedisAccess {
  testEnv: TestEnv;
  stack: RunningStack;
  client: ApiClient;
  /** An admin's token. */
  admin: string;
  /** The test database, when asked for (`database: true`). */
  db: DataSource;
  /** The file's own redis-server, when asked for (`redis: 'private'`): tests may kill and restart it. */
  redisServer: PrivateRedisServer;
  // `redis`, `keys`, `scripts`, `saleRedis`, `handoff` (SaleRedisAccess): the file's Redis, when asked for (`saleRedis: true`).
  /** The file's own Redis Cluster, when asked for (`redis: 'cluster'`). */
  cluster: LocalRedisCluster;
}

export interface StackWorldOptions {
  /** Overrides of the test environment's variables (made in `beforeAll` when a function, e.g. free ports). */
  env?: Record<string, string> | (() => Promise<Record<string, string>>);
  /** `false`: the API alone, no worker. */
  worker?: boolean;
  /**
   * `false`: no API nor worker at all — the environment, the database and the Redis access alone, for a
   * file that drives the libraries itself or starts the apps as processes of its own (`stores()`).
   */
  apps?: boolean;
  /** Open the test database for assertions straight from MySQL (`world.db`). */
  database?: boolean;
  /** The shared test Redis (default), a private redis-server, or a private Redis Cluster. */
  redis?: 'shared' | 'private' | 'cluster';
  /** With `redis: 'cluster'`: its shape (three masters without replicas unless said). */
  cluster?: RedisClusterOptions;
  /**
   * A client on the file's Redis with its key prefix, and the repositories over it (`world.redis`,
   * `keys`, `scripts`, `saleRedis`), to look at or arrange what the apps keep there.
   */
  saleRedis?: boolean;
}

/**
 * The one world builder of the integration and browser tests: registers the `beforeAll`/`afterAll`
 * pair a file opens with — a private test environment (`env` overrides its variables) on the shared or
 * a private Redis or Redis Cluster, the API and worker on it, an admin signed in, and what the file
 * asks to look at (its database, its Redis) — all closed and dropped after the file. A feature's world
 * (orders/lifecycle-world.ts, abuse/attack-world.ts, e2e/storefront-world.ts) calls it first and adds
 * its own `beforeAll` after it, which jest runs after this one. Its fields are read inside tests and
 * hooks, once set.
 */
export function useStackWorld(options: StackWorldOptions = {}): StackWorld {
  const world = {} as StackWorld;
  beforeAll(async () => {
    const redisEnv: Record<string, string> = {};
    if (options.redis === 'private') {
      world.redisServer = await PrivateRedisServer.start();
      redisEnv['REDIS_URL'] = world.redisServer.url;
    } else if (options.redis === 'cluster') {
      world.cluster = await startRedisCluster(options.cluster);
      redisEnv['REDIS_CLUSTER_NODES'] = world.cluster.nodes.join(',');
    }
    const env = typeof options.env === 'function' ? await options.env() : options.env;
    world.testEnv = await createTestEnv({ ...redisEnv, ...env });
    if (options.database) world.db = await openDatabase(world.testEnv.config);
    if (options.saleRedis) {
      Object.assign(world, openSaleRedis(world.testEnv.config.redis));
      await untilReady(world.redis);
    }
    if (options.apps === false) return;
    world.stack = await startStack(world.testEnv.config, { worker: options.worker });
    world.client = world.stack.client;
    world.admin = await world.client.adminToken(world.testEnv.env['ADMIN_PASSWORD']!);
  });
  afterAll(async () => {
    // Only a stack whose Redis a test may have killed gets a bounded close: anywhere else a shutdown that
    // hangs (a leaked connection or consumer) is a failure, and the hook's timeout must report it.
    if (options.redis === 'private' || options.redis === 'cluster') await closeWithin(10_000, world.stack?.close());
    else await world.stack?.close();
    world.redis?.disconnect();
    await world.redisServer?.destroy();
    await world.cluster?.stop();
    await world.db?.destroy();
    await world.testEnv?.cleanup();
  });
  return world;
}

/** A file's test environment, its database and a client on its Redis, without the apps (`apps: false`). */
export function useStoreWorld(
  options: Omit<StackWorldOptions, 'apps' | 'worker' | 'database' | 'saleRedis'> = {},
): Omit<StackWorld, 'stack' | 'client' | 'admin'> {
  return useStackWorld({ ...options, apps: false, database: true, saleRedis: true });
}
