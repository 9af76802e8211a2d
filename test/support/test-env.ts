import { randomBytes } from 'node:crypto';
import { type AppConfig, loadConfig } from '@flash-sale/config';
import { databaseName, migrate } from '@flash-sale/db';
import { createRedisClient } from '@flash-sale/redis';
import { DataSource } from 'typeorm';
import { deleteKeys, TEST_REDIS_URL } from './test-redis';

const MYSQL_SERVER_URL = process.env['TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';
const REDIS_URL = TEST_REDIS_URL;

export interface TestEnv {
  config: AppConfig;
  /** The environment variables that make a child process use this test's database and prefixes. */
  env: Record<string, string>;
  /** Drops the database and deletes every Redis key of this test's prefixes. */
  cleanup(): Promise<void>;
}

/**
 * A private world for one test file on the real services: its own MySQL database (migrated), its own
 * Redis key prefix and BullMQ prefix. Refuses any database whose name does not say it is for tests.
 */
export async function createTestEnv(overrides: Record<string, string> = {}): Promise<TestEnv> {
  const id = randomBytes(4).toString('hex');
  const databaseUrl = `${MYSQL_SERVER_URL}/flash_sale_test_${id}`;
  if (!databaseName(databaseUrl).includes('_test_')) throw new Error(`Refusing a non-test database: ${databaseUrl}`);
  await migrate(databaseUrl);
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `fs-test-${id}`,
    QUEUE_PREFIX: `{fs-test-${id}-queue}`,
    JWT_SECRET: `test-secret-${id}`,
    ADMIN_PASSWORD: 'test-admin-password',
    // Many workers share a test process: none listens on the default metrics port unless a test asks.
    WORKER_METRICS_PORT: '0',
    // Tests sign in hundreds of guests from 127.0.0.1 and walk one user through dozens of refusals in a
    // few seconds: limits that stay out of their way. test/abuse/rate-limits.int.spec.ts and
    // test/purchase/purchase-admission.int.spec.ts set the limits they measure.
    RATE_LIMIT_PROFILE: 'load-test',
    RATE_LIMIT_PURCHASES_POINTS: '100000',
    RATE_LIMIT_SUBMIT_TOKENS_POINTS: '100000',
    RATE_LIMIT_QUEUE_JOINS_POINTS: '100000',
    // The API, the worker and the load share one event loop in a test: its delay measures the test, not
    // the API, so it sheds nothing unless a test asks (test/purchase/purchase-admission.int.spec.ts).
    SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    // `TEST_SALE_BUCKETS=3 npm run test:int -- …` runs the same tests on sales spread over 3 buckets.
    ...(process.env['TEST_SALE_BUCKETS'] ? { SALE_BUCKETS_DEFAULT: process.env['TEST_SALE_BUCKETS'] } : {}),
    ...overrides,
  };
  const config = loadConfig(env);
  return {
    config,
    env,
    async cleanup() {
      const server = new DataSource({ type: 'mysql', url: MYSQL_SERVER_URL });
      await server.initialize();
      await server.query(`DROP DATABASE IF EXISTS \`${databaseName(databaseUrl)}\``);
      await server.destroy();
      const redis = createRedisClient({ url: REDIS_URL, clusterNodes: [] });
      try {
        await deleteKeys(redis, [`${env['REDIS_KEY_PREFIX']}:*`, `${env['QUEUE_PREFIX']}:*`]);
      } finally {
        redis.disconnect();
      }
    },
  };
}

/**
 * What production needs on top of a test's environment: `NODE_ENV=production` and fresh secrets that
 * pass its checks (libs/config secrets.ts), made as docs/operations.md says (`openssl rand -base64 48`).
 */
export function productionSecrets(): Record<string, string> {
  // The 'Aa1' tail: a draw with neither digit nor symbol (once in ~600,000) must not fail a test at random.
  const key = () => `${randomBytes(48).toString('base64')}Aa1`;
  return {
    NODE_ENV: 'production',
    JWT_SECRET: key(),
    PAYMENT_WEBHOOK_SECRET: key(),
    METRICS_TOKEN: key(),
    ADMIN_PASSWORD: randomBytes(18).toString('base64url'),
  };
}

/** A DataSource on the test database, for assertions straight from MySQL. */
export async function openDatabase(config: AppConfig): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'mysql',
    url: config.database.url,
    timezone: 'Z',
    supportBigNumbers: true,
  });
  await dataSource.initialize();
  return dataSource;
}
