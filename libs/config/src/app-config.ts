import { availableParallelism } from 'node:os';
import { ConfigError } from './config-error';
import { type Env, flag, integer, oneOf, url } from './env-readers';
import { type ProtectionConfig, protectionConfig, trustedProxies } from './protection-config';
import { readSecrets } from './secrets';

export { ConfigError } from './config-error';
export { type ProtectionConfig, RATE_LIMIT_PROFILES, type RateLimit, type RateLimitProfile } from './protection-config';

/**
 * API processes when API_INSTANCES is not set: half the cores, at least one. The API shares its machine
 * with the worker, Redis and MariaDB (and often the load generator); with one process per core they take
 * CPU from one another, and every extra process starts cold. The bench's opening section measures the
 * counts on the machine it runs on (docs/performance.md, "How many API processes").
 */
export function defaultApiInstances(cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / 2));
}

/**
 * The one place that reads the environment. It is validated once at boot and mapped into typed
 * sections; a bad value stops the process with a message that names the variable.
 */
export interface AppConfig {
  production: boolean;
  /**
   * Development only: one line saying which secrets are the public development values or would be
   * refused in production (secrets.ts); the API logs it once at start. Undefined in production.
   */
  developmentSecretsNotice: string | undefined;
  http: {
    port: number;
    host: string;
    /**
     * The load balancers or reverse proxies whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed
     * (Fastify's `trustProxy`): their addresses or CIDR ranges, or proxy-addr's `loopback`,
     * `linklocal`, `uniquelocal`. Empty: none, the client is the socket's peer.
     */
    trustProxy: string[];
    /**
     * API processes the cluster entry (apps/api/src/cluster.ts) runs on this one port, handing each
     * connection to the next in turn; the plain entry (main.ts) is always one process.
     */
    instances: number;
  };
  database: {
    url: string;
    /** A replica of it (binlog replication, GTIDs on) for reads that may lag; none: the primary serves them. */
    replicaUrl?: string;
  };
  redis: {
    url: string;
    clusterNodes: string[];
    keyPrefix: string;
    /**
     * How long the API waits for Redis to answer one command before it answers the request `503`: a link
     * cut silently (a partition) leaves the connection open and the command unanswered, with no error of
     * its own. Always above DURABLE_ACK_TIMEOUT_MS by a second, so a durable acknowledgement's WAIT ends first.
     */
    commandTimeoutMs: number;
  };
  queue: { prefix: string };
  auth: { jwtSecret: string; adminPassword: string; jwtTtlSeconds: number };
  payment: {
    webhookSecret: string;
    /** Where the simulated provider posts its callbacks; by default this API's own listening address. */
    callbackUrl: string | undefined;
    /** Like real providers, the simulated one calls back late, more than once, and out of order. */
    callbackDelayMs: number;
    callbackJitterMs: number;
    callbackCopies: number;
  };
  purchase: {
    submitTokenTtlSeconds: number;
    /** When Redis is unreachable, a redis-lua sale keeps selling through MySQL (db-optimistic). */
    redisFallback: boolean;
    /**
     * How long an API instance trusts its own SOLD_OUT reading (purchase/strategies/redis-lua/sold-out-gate.ts), renewed in the
     * background past half of it; a return of units clears it at once. 0 turns the local flag off.
     */
    soldOutFlagTtlMs: number;
    /**
     * `replica`: a 202 is sent only after Redis's WAIT confirms that a replica holds the reservation,
     * so a failover to that replica cannot lose it (a timeout answers 503; the same token replays).
     * `off`: the reservation is acknowledged as soon as the primary has it.
     * `auto` (the default): `replica` when every Redis master has a replica as the API starts, else `off`.
     */
    durableAck: DurableAck;
    durableAckTimeoutMs: number;
    /**
     * The redis-lock strategies' per-sale lock: a grant lives `ttlMs` unless its holder renews it (every
     * third of it); a buyer waits at most `waitMs` for it, then gets 503 + retry-after.
     */
    lockTtlMs: number;
    lockWaitMs: number;
    /**
     * Buckets of a redis-lua sale created without `buckets` (docs/architecture.md "Hot sales: buckets"):
     * more than 1 spreads every new sale's stock over that many Redis Cluster slots.
     */
    saleBucketsDefault: number;
  };
  /** Stock leases from MySQL to Redis (docs/architecture.md "Who owns the stock"). */
  leases: {
    /** Units one lease hands to Redis; smaller leases keep more stock sellable by the MySQL fallback. */
    size: number;
    /** When a purchase leaves Redis with fewer units than this, the next lease is taken in the background. */
    lowWater: number;
  };
  worker: {
    concurrency: number;
    /** Group commit: at most this many orders share one MySQL transaction. */
    batchSize: number;
    /** A batch short of ORDER_BATCH_SIZE: the next read waits this long from it, to gather a larger one. */
    gatherMs: number;
    jobAttempts: number;
    optimisticLockRetries: number;
    /** How long a job's lock lives without renewal; a dead worker's jobs are retaken after it. */
    lockDurationMs: number;
    /**
     * A hand-off entry a worker was given this long ago and never acknowledged is taken over by another
     * (its worker died mid-batch). Writing an order twice is harmless (the second is a duplicate of the
     * same order number), so this is short: a dead worker delays its sale by seconds.
     */
    claimIdleMs: number;
  };
  lifecycle: {
    /** How often the hand-off sweep wakes the writers of sales with unwritten hand-offs. */
    recoveryIntervalMs: number;
    /** How long settling a lost incarnation waits for late writes of its hand-offs. */
    recoveryGraceMs: number;
    /** How often Redis and MySQL are compared for the sales that need it (the drift metric). */
    reconcileIntervalMs: number;
    /**
     * Reconciliation visits a sale while its last change (a purchase, an order written, paid, cancelled
     * or expired, a lease) is at most this old: several runs after a sale goes quiet, so one that raced
     * the last change is followed by a clean one. At least one interval.
     */
    reconcileActiveWindowMs: number;
    /**
     * How often the sales reconciliation does not visit are checked cheaply: a live one's Redis
     * incarnation is verified (a Redis that lost it or holds a stale copy), an ended one gets its
     * retention. Also done right after the worker's Redis connection comes back.
     */
    idleSaleCheckIntervalMs: number;
    /**
     * How long an ended Redis-backed sale's keys stay in Redis once every reservation of it is written
     * (they expire at the sale's end + this), so Redis holds only recent sales.
     */
    saleRedisRetentionMs: number;
    /**
     * How often the expiry sweep runs: the one mechanism that expires unpaid orders (a BullMQ job
     * scheduler, so once per cluster). An order expires at most about this long after its deadline.
     */
    expirySweepIntervalMs: number;
  };
  web: {
    /**
     * The built storefront (apps/web/dist) the API serves on its own port; unset means the API's
     * default location beside it. A directory without index.html is skipped with a warning.
     */
    storefrontDir: string | undefined;
  };
  ops: {
    /** Port of the worker's Prometheus endpoint (`GET /metrics`); 0 disables it. */
    workerMetricsPort: number;
    /**
     * Who may scrape `/metrics` (the API's and the worker's): with a token, only a request that sends
     * it as `Authorization: Bearer <token>`; without one, anybody in development and nobody in production.
     */
    metrics: { token: string | undefined; open: boolean };
    /** The OpenAPI pages `/docs` and `/docs-json`: on in development, off in production unless asked for. */
    docsEnabled: boolean;
    logLevel: LogLevel;
    /** Human-readable log lines (pino-pretty) instead of JSON, for a terminal. */
    logPretty: boolean;
    /**
     * Percent of the purchase route's answers below 500 that get an access line (apps/api/src/ops/logging.ts):
     * the flood is counted by the metrics, and a line per answer was a tenth of its cost. 100 = every one.
     */
    purchaseAccessLogPercent: number;
    /**
     * Purchases an API process sends itself after it listens and before it reports ready, through the
     * real purchase route, off the books (apps/api/src/ops/startup-warm-up.ts): the crowd of a sale's
     * opening then meets compiled code and open connections. 0 turns it off.
     */
    warmUpRequests: number;
  };
  /** Protection at the door (apps/api/src/protection, docs/protection.md). */
  protection: ProtectionConfig;
}

/** A limit: at most `points` requests per `durationSeconds` window for one key (IP, user or sale). */
export const DURABLE_ACKS = ['auto', 'off', 'replica'] as const;
export type DurableAck = (typeof DURABLE_ACKS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function loadConfig(env: Env = process.env): AppConfig {
  const production = env['NODE_ENV'] === 'production';
  const clusterNodes = (env['REDIS_CLUSTER_NODES'] ?? '')
    .split(',')
    .map((node) => node.trim())
    .filter(Boolean);
  for (const node of clusterNodes) {
    if (!/^[^:\s]+:\d{1,5}$/.test(node))
      throw new ConfigError(`REDIS_CLUSTER_NODES entry must be host:port, got "${node}"`);
  }
  const { secrets, notice } = readSecrets(env, production);
  const reconcileIntervalMs = integer(env, 'RECONCILE_INTERVAL_MS', 15_000, 1_000, 3_600_000);
  const durableAckTimeoutMs = integer(env, 'DURABLE_ACK_TIMEOUT_MS', 200, 1, 10_000);
  return {
    production,
    developmentSecretsNotice: notice,
    // Loopback unless told otherwise: a development stack with public default secrets must not be reachable.
    http: {
      port: integer(env, 'PORT', 3000, 0, 65535),
      host: env['HOST'] || '127.0.0.1',
      trustProxy: trustedProxies(env),
      instances: integer(env, 'API_INSTANCES', defaultApiInstances(), 1, 256),
    },
    database: {
      url: url(env, 'DATABASE_URL', 'mysql://root@127.0.0.1:3306/flash_sale', ['mysql:', 'mariadb:']),
      ...(env['DATABASE_REPLICA_URL']
        ? { replicaUrl: url(env, 'DATABASE_REPLICA_URL', '', ['mysql:', 'mariadb:']) }
        : {}),
    },
    redis: {
      url: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
      clusterNodes,
      keyPrefix: env['REDIS_KEY_PREFIX'] || 'fs',
      commandTimeoutMs: Math.max(
        integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 3_000, 100, 600_000),
        durableAckTimeoutMs + 1_000,
      ),
    },
    // Braces make BullMQ's keys one hash tag, which Redis Cluster requires.
    queue: { prefix: env['QUEUE_PREFIX'] || '{fs-queue}' },
    auth: {
      jwtSecret: secrets.jwtSecret,
      adminPassword: secrets.adminPassword,
      jwtTtlSeconds: integer(env, 'JWT_TTL_SECONDS', 86_400, 60, 30 * 86_400),
    },
    payment: {
      webhookSecret: secrets.webhookSecret,
      callbackUrl: env['PAYMENT_CALLBACK_URL'] ? url(env, 'PAYMENT_CALLBACK_URL', '', ['http:', 'https:']) : undefined,
      callbackDelayMs: integer(env, 'PAYMENT_CALLBACK_DELAY_MS', 500, 0, 600_000),
      callbackJitterMs: integer(env, 'PAYMENT_CALLBACK_JITTER_MS', 1_000, 0, 600_000),
      callbackCopies: integer(env, 'PAYMENT_CALLBACK_COPIES', 2, 0, 10),
    },
    purchase: {
      submitTokenTtlSeconds: integer(env, 'SUBMIT_TOKEN_TTL_SECONDS', 120, 5, 3600),
      redisFallback: oneOf(env, 'REDIS_FALLBACK', 'on', ['on', 'off'] as const) === 'on',
      soldOutFlagTtlMs: integer(env, 'SOLD_OUT_FLAG_TTL_MS', 3_000, 0, 600_000),
      durableAck: oneOf(env, 'DURABLE_ACK', 'auto', DURABLE_ACKS),
      durableAckTimeoutMs,
      lockTtlMs: integer(env, 'PURCHASE_LOCK_TTL_MS', 2_000, 100, 600_000),
      lockWaitMs: integer(env, 'PURCHASE_LOCK_WAIT_MS', 5_000, 0, 600_000),
      saleBucketsDefault: integer(env, 'SALE_BUCKETS_DEFAULT', 1, 1, 16),
    },
    leases: {
      size: integer(env, 'LEASE_SIZE', 1_000, 1, 1_000_000),
      lowWater: integer(env, 'LEASE_LOW_WATER', 200, 0, 1_000_000),
    },
    worker: {
      concurrency: integer(env, 'WORKER_CONCURRENCY', 256, 1, 10_000),
      batchSize: integer(env, 'ORDER_BATCH_SIZE', 200, 1, 5_000),
      gatherMs: integer(env, 'ORDER_BATCH_GATHER_MS', 50, 0, 1_000),
      jobAttempts: integer(env, 'ORDER_JOB_ATTEMPTS', 8, 1, 100),
      optimisticLockRetries: integer(env, 'OPTIMISTIC_LOCK_RETRIES', 10, 1, 1_000),
      lockDurationMs: integer(env, 'WORKER_LOCK_DURATION_MS', 2_000, 1_000, 600_000),
      claimIdleMs: integer(env, 'HANDOFF_CLAIM_IDLE_MS', 2_000, 100, 600_000),
    },
    web: { storefrontDir: env['STOREFRONT_DIR'] || undefined },
    ops: {
      workerMetricsPort: integer(env, 'WORKER_METRICS_PORT', 9464, 0, 65535),
      metrics: { token: secrets.metricsToken, open: !production && secrets.metricsToken === undefined },
      docsEnabled: flag(env, 'DOCS_ENABLED', !production),
      logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
      logPretty: flag(env, 'LOG_PRETTY'),
      purchaseAccessLogPercent: integer(env, 'PURCHASE_ACCESS_LOG_PERCENT', 1, 0, 100),
      warmUpRequests: integer(env, 'WARM_UP_REQUESTS', 3_000, 0, 100_000),
    },
    protection: protectionConfig(env),
    lifecycle: {
      recoveryIntervalMs: integer(env, 'RECOVERY_INTERVAL_MS', 30_000, 1_000, 3_600_000),
      recoveryGraceMs: integer(env, 'RECOVERY_GRACE_MS', 15_000, 0, 3_600_000),
      reconcileIntervalMs,
      reconcileActiveWindowMs: integer(
        env,
        'RECONCILE_ACTIVE_WINDOW_MS',
        4 * reconcileIntervalMs,
        reconcileIntervalMs,
        86_400_000,
      ),
      idleSaleCheckIntervalMs: integer(env, 'IDLE_SALE_CHECK_INTERVAL_MS', 300_000, 1_000, 86_400_000),
      saleRedisRetentionMs: integer(env, 'SALE_REDIS_RETENTION_MS', 86_400_000, 0, 30 * 86_400_000),
      expirySweepIntervalMs: integer(env, 'EXPIRY_SWEEP_INTERVAL_MS', 1_000, 100, 600_000),
    },
  };
}
