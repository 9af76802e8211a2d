import { availableParallelism } from 'node:os';
import { loadConfig } from './app-config';

describe('loadConfig', () => {
  it('has a safe local default for everything in development', () => {
    const config = loadConfig({});
    expect(config.http.port).toBe(3000);
    expect(config.database.url).toBe('mysql://root@127.0.0.1:3306/flash_sale');
    expect(config.redis).toMatchObject({ url: 'redis://127.0.0.1:6379', clusterNodes: [] });
    expect(config.auth.adminPassword).toBe('admin');
    expect(config.ops.metrics).toEqual({ token: undefined, open: true });
    expect(config.ops.docsEnabled).toBe(true);
    expect(config.http.trustProxy).toEqual([]);
    expect(config.http.instances).toBe(Math.max(1, Math.floor(availableParallelism() / 2)));
    expect(config.ops.warmUpRequests).toBe(3000);
  });

  it('refuses malformed values with the variable name', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be an integer/);
    expect(loadConfig({ API_INSTANCES: '3' }).http.instances).toBe(3);
    expect(() => loadConfig({ API_INSTANCES: '0' })).toThrow(/API_INSTANCES must be an integer between 1 and 256/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x/y' })).toThrow(/DATABASE_URL must use/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:1,b' })).toThrow(/REDIS_CLUSTER_NODES entry/);
  });

  it('reads the operations settings: worker metrics port (0 = off), log level, pretty logs', () => {
    expect(loadConfig({}).ops).toMatchObject({ workerMetricsPort: 9464, logLevel: 'info', logPretty: false });
    expect(loadConfig({ WORKER_METRICS_PORT: '0', LOG_LEVEL: 'debug', LOG_PRETTY: '1' }).ops).toMatchObject({
      workerMetricsPort: 0,
      logLevel: 'debug',
      logPretty: true,
    });
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of fatal, error/);
    expect(() => loadConfig({ LOG_PRETTY: 'yes' })).toThrow(/LOG_PRETTY must be 1 or 0/);
    expect(() => loadConfig({ WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT must be an integer/);
  });

  it('reads the lifecycle intervals, the expiry sweep every second by default', () => {
    expect(loadConfig({}).lifecycle.expirySweepIntervalMs).toBe(1_000);
    expect(loadConfig({ EXPIRY_SWEEP_INTERVAL_MS: '250' }).lifecycle.expirySweepIntervalMs).toBe(250);
    expect(() => loadConfig({ EXPIRY_SWEEP_INTERVAL_MS: '10' })).toThrow(/EXPIRY_SWEEP_INTERVAL_MS must be an integer/);
  });

  it('reads how background work finds its sales, and how long an ended sale stays in Redis', () => {
    expect(loadConfig({}).lifecycle).toMatchObject({
      reconcileIntervalMs: 15_000,
      reconcileActiveWindowMs: 60_000,
      idleSaleCheckIntervalMs: 300_000,
      saleRedisRetentionMs: 86_400_000,
    });
    // The window follows the interval unless set, and is never shorter than one interval.
    expect(loadConfig({ RECONCILE_INTERVAL_MS: '2000' }).lifecycle.reconcileActiveWindowMs).toBe(8_000);
    expect(() => loadConfig({ RECONCILE_INTERVAL_MS: '2000', RECONCILE_ACTIVE_WINDOW_MS: '1000' })).toThrow(
      /RECONCILE_ACTIVE_WINDOW_MS must be an integer between 2000 and/,
    );
    expect(loadConfig({ SALE_REDIS_RETENTION_MS: '0' }).lifecycle.saleRedisRetentionMs).toBe(0);
    expect(() => loadConfig({ SALE_REDIS_RETENTION_MS: '-1' })).toThrow(/SALE_REDIS_RETENTION_MS must be an integer/);
    expect(() => loadConfig({ IDLE_SALE_CHECK_INTERVAL_MS: '10' })).toThrow(/IDLE_SALE_CHECK_INTERVAL_MS must be/);
  });

  it("waits REDIS_COMMAND_TIMEOUT_MS for a Redis command, always a second past a durable acknowledgement's wait", () => {
    expect(loadConfig({}).redis.commandTimeoutMs).toBe(3_000);
    expect(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '800' }).redis.commandTimeoutMs).toBe(1_200);
    expect(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '800', DURABLE_ACK_TIMEOUT_MS: '50' }).redis.commandTimeoutMs).toBe(
      1_050,
    );
    expect(loadConfig({ DURABLE_ACK_TIMEOUT_MS: '5000' }).redis.commandTimeoutMs).toBe(6_000);
  });

  it('switches Redis to cluster mode when nodes are listed', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000, 127.0.0.1:7001' }).redis.clusterNodes).toEqual([
      '127.0.0.1:7000',
      '127.0.0.1:7001',
    ]);
  });

  it('listens on loopback unless HOST says otherwise', () => {
    expect(loadConfig({}).http.host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).http.host).toBe('0.0.0.0');
  });

  it('takes REDIS_FALLBACK as on or off only: anything else stops the process', () => {
    expect(loadConfig({}).purchase.redisFallback).toBe(true);
    expect(loadConfig({ REDIS_FALLBACK: 'on' }).purchase.redisFallback).toBe(true);
    expect(loadConfig({ REDIS_FALLBACK: 'off' }).purchase.redisFallback).toBe(false);
    for (const value of ['0', 'false', 'no', 'OFF']) {
      expect(() => loadConfig({ REDIS_FALLBACK: value })).toThrow(/REDIS_FALLBACK must be one of on, off/);
    }
  });

  it('reads the rate-limit profile, trusted IPs and limits; load-test lifts only the per-IP sign-in limits', () => {
    const standard = loadConfig({}).protection;
    expect(standard.rateLimitProfile).toBe('standard');
    expect(standard.limits.guestSignInPerIp).toEqual({ points: 20, durationSeconds: 60 });
    expect(standard.limits.purchasesPerUser).toEqual({ points: 10, durationSeconds: 10 });
    const loadTest = loadConfig({ RATE_LIMIT_PROFILE: 'load-test' }).protection;
    expect(loadTest.limits.guestSignInPerIp.points).toBeGreaterThan(100_000);
    expect(loadTest.limits.purchasesPerUser).toEqual(standard.limits.purchasesPerUser);
    expect(loadTest.limits.submitTokensPerUser).toEqual(standard.limits.submitTokensPerUser);
    expect(
      loadConfig({ RATE_LIMIT_PURCHASES_POINTS: '3', RATE_LIMIT_PURCHASES_SECONDS: '5' }).protection.limits
        .purchasesPerUser,
    ).toEqual({ points: 3, durationSeconds: 5 });
    expect(loadConfig({ RATE_LIMIT_TRUSTED_IPS: '10.0.0.5, ::1' }).protection.trustedIps).toEqual(['10.0.0.5', '::1']);
    expect(() => loadConfig({ RATE_LIMIT_PROFILE: 'off' })).toThrow(/RATE_LIMIT_PROFILE must be one of/);
    expect(() => loadConfig({ RATE_LIMIT_TRUSTED_IPS: '*' })).toThrow(/RATE_LIMIT_TRUSTED_IPS entry/);
    expect(() => loadConfig({ RATE_LIMIT_PURCHASES_POINTS: '0' })).toThrow(/RATE_LIMIT_PURCHASES_POINTS/);
  });
});
