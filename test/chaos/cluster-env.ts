export const ADMIN_PASSWORD = 'chaos-admin-password';

/**
 * The settings every process of the explorer's cluster runs with: its own key prefixes and secrets
 * (`id`), MySQL and Redis as `links` name them, and timings that make the system quiet again within
 * seconds of a fault.
 */
export function chaosEnv(id: string, links: { databaseUrl: string; redisUrl: string }): Record<string, string> {
  return {
    DATABASE_URL: links.databaseUrl,
    REDIS_URL: links.redisUrl,
    REDIS_KEY_PREFIX: `chaos-${id}`,
    QUEUE_PREFIX: `{chaos-${id}-queue}`,
    JWT_SECRET: `chaos-secret-${id}`,
    ADMIN_PASSWORD,
    PAYMENT_WEBHOOK_SECRET: `chaos-webhook-${id}`,
    WORKER_METRICS_PORT: '0',
    // CHAOS_LOG_LEVEL=info keeps every line in processes.log, to follow what reconciliation did.
    LOG_LEVEL: process.env['CHAOS_LOG_LEVEL'] ?? 'warn',
    // A short startup warm-up: its path runs at every restart, without a second per boot.
    WARM_UP_REQUESTS: '100',
    // The outage fallback is what the explorer is after: a redis-lua sale sells through MySQL while Redis is down.
    REDIS_FALLBACK: 'on',
    // One client address signs in every buyer and buys far faster than a person would.
    RATE_LIMIT_PROFILE: 'load-test',
    RATE_LIMIT_PURCHASES_POINTS: '100000',
    RATE_LIMIT_SUBMIT_TOKENS_POINTS: '100000',
    RATE_LIMIT_QUEUE_JOINS_POINTS: '100000',
    SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    // Small leases keep units in MySQL for the fallback to sell, and make leases happen often.
    LEASE_SIZE: '4',
    LEASE_LOW_WATER: '1',
    // Quiet comes in seconds: background repair runs often, a dead worker's jobs are retaken soon.
    RECONCILE_INTERVAL_MS: '1000',
    RECOVERY_INTERVAL_MS: '1000',
    RECOVERY_GRACE_MS: '1000',
    IDLE_SALE_CHECK_INTERVAL_MS: '1000',
    WORKER_LOCK_DURATION_MS: '2000',
    EXPIRY_SWEEP_INTERVAL_MS: '500',
    PAYMENT_CALLBACK_DELAY_MS: '100',
    PAYMENT_CALLBACK_JITTER_MS: '200',
  };
}
