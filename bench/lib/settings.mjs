/**
 * What one bench run is: its settings (from the environment, see bench/README.md) and the private
 * names it works under.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './app-dist.mjs';

const intEnv = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
};

export const SETTINGS = {
  durationS: intEnv('BENCH_DURATION', 10),
  warmupS: intEnv('BENCH_WARMUP', 2),
  connections: intEnv('BENCH_CONNECTIONS', 64),
  // The sold-out flood is run a second time with this many connections: the crowd after a sell-out.
  floodConnections: intEnv('BENCH_FLOOD_CONNECTIONS', 512),
  users: intEnv('BENCH_USERS', 200_000),
  drainOrders: intEnv('BENCH_DRAIN_ORDERS', 20_000),
  strategyStock: intEnv('BENCH_STRATEGY_STOCK', 1_000),
  strategyBuyers: intEnv('BENCH_STRATEGY_BUYERS', 3_000),
  strategyWarmup: intEnv('BENCH_STRATEGY_WARMUP', 300),
  // Sales created per strategy in the create-sale section (after one timed apart).
  createSaleCount: intEnv('BENCH_CREATE_SALES', 40),
  // The previous build's drain (orders/s) on a quiet machine, in the same kind of run: the drain target
  // is relative to it, since an absolute orders/s says more about the machine than about the build.
  drainBaseline: intEnv('BENCH_DRAIN_BASELINE', 10_071),
  idleS: intEnv('BENCH_IDLE_DURATION', 20),
  // The scale section: API processes behind one port, and buckets of the hot sale on the Redis Cluster.
  scaleProcesses: intEnv('BENCH_SCALE_PROCESSES', 2),
  scaleBuckets: intEnv('BENCH_SCALE_BUCKETS', 3),
  // The opening section's rounds per API process count: one cold burst lasts half a second, so a single
  // round swings by a third on a shared machine; its targets are judged on the median round.
  openingRounds: intEnv('BENCH_OPENING_ROUNDS', 3),
  liveStock: 2_000_000,
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
};
for (const [name, value] of [
  ['BENCH_DRAIN_ORDERS', SETTINGS.drainOrders],
  ['BENCH_STRATEGY_BUYERS', SETTINGS.strategyBuyers],
]) {
  // autocannon refuses a fixed-count run with more connections than requests.
  if (value < SETTINGS.connections) throw new Error(`${name} (${value}) must be at least BENCH_CONNECTIONS`);
}

export const RUN_ID = randomBytes(4).toString('hex');
export const DB_NAME = `flash_sale_bench_${RUN_ID}`;
export const MYSQL_SERVER_URL = (process.env.BENCH_MYSQL_URL || 'mysql://root@127.0.0.1:3306').replace(/\/+$/, '');
export const DATABASE_URL = `${MYSQL_SERVER_URL}/${DB_NAME}`;
export const REDIS_KEY_PREFIX = `fs-bench-${RUN_ID}`;
export const QUEUE_PREFIX = `{fs-bench-${RUN_ID}}`; // braces: one hash tag, as the app's default prefix has
// Fresh per run: the bench runs the API in production mode, which refuses published or weak secrets.
export const JWT_SECRET = randomBytes(48).toString('base64');
export const ADMIN_PASSWORD = randomBytes(24).toString('base64url');
export const PAYMENT_WEBHOOK_SECRET = randomBytes(48).toString('base64');
export const TOKEN_TTL_S = 600; // submit tokens must outlive the whole run (prepared before each scenario)
export const TMP = path.join(os.tmpdir(), `flash-sale-bench-${RUN_ID}`);
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
/** The ceiling's sale lives only in Redis, under our private prefix; digits, as order numbers need. */
export const CEILING_SALE_ID = '900000001';
/** Above this (% of one core used by processes not ours), a run is flagged as not comparable. */
export const NOISY_OTHER_PERCENT = 20;
/**
 * Of the contract's UNSAFE_STRATEGIES, the one that must oversell under the bench's load. The other,
 * redis-lock-unfenced, oversells only when a lock holder pauses past the lock's TTL, which the bench
 * never does (the demo's --pause-lock-holder does): it is measured for the cost of its lock without the
 * fencing token, and its oversold count is reported, not checked.
 */
export const MUST_OVERSELL = 'naive-unsafe';
/**
 * The idle scenario: this many live redis-lua sales, each sold out (IDLE_SALE_STOCK buyers) and written.
 * An idle worker must not cost more with many open sales: any per-sale polling would show here.
 */
export const IDLE_SALES = 200;
export const IDLE_SALE_STOCK = 2;

export const log = (message) => console.log(`[bench] ${message}`);
