/**
 * Four projects: `unit` (pure, fast), `integration` (`*.int.spec.ts`: real Redis and MariaDB,
 * each file with its own database and key prefix), `integration-3-buckets` (the invariant tests
 * again on sales of three buckets) and `e2e` (`test/e2e/*.e2e.spec.ts`: the built
 * storefront in headless Chromium against the real API, worker, Redis and MariaDB). ts-jest transpiles file by file (type checking
 * is `npm run typecheck`'s job) and keeps decorator metadata, so Nest DI works without a build;
 * libs resolve to their sources.
 */
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }];
/** The scripts' ES modules the tests share with `npm start` and the bench (scripts/lib: ports, the Redis Cluster). */
const esmToCjs = '<rootDir>/test/support/esm-to-cjs.mjs';

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest, '^.+\\.mjs$': esmToCjs },
  moduleNameMapper: { '^@flash-sale/(contract|domain|config|redis|db|stock|queue)$': '<rootDir>/libs/$1/src' },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/.data/'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/apps/web/'],
};

/**
 * The invariant tests again, on sales spread over three buckets (docs/architecture.md "Hot sales:
 * buckets"): every promise must hold whatever the bucket count. Their own project, so one jest run
 * spreads both passes over its workers.
 */
const INVARIANTS_ON_BUCKETS = [
  'test/purchase/purchase-flow.int.spec.ts',
  'test/scale-out/redis-cluster-flow.int.spec.ts',
  'test/sales/lease-refill.int.spec.ts',
  'test/outages/outage-sequences.int.spec.ts',
  'test/outages/redis-outage.int.spec.ts',
  'test/outages/stale-redis.int.spec.ts',
  'test/purchase/sold-out-gate.int.spec.ts',
  'test/purchase/sold-out-flood.int.spec.ts',
  'test/outages/durable-ack.int.spec.ts',
  'test/outages/incarnation-race.int.spec.ts',
  'test/sales/idle-sales.int.spec.ts',
  'test/orders/order-expiry.int.spec.ts',
  'test/orders/order-payment.int.spec.ts',
  'test/orders/order-recovery.int.spec.ts',
  'test/chaos/chaos-explorer.int.spec.ts',
  'test/outages/answers-after-outage.int.spec.ts',
  'test/sales/sale-window.int.spec.ts',
];

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      // load-tests/lib: the k6 reports' verdict and formatting logic, which imports no k6 module;
      // test/chaos: the explorer's checker, judged on histories written out by hand.
      testMatch: [
        '<rootDir>/{apps,libs}/*/src/**/*.spec.ts',
        '<rootDir>/load-tests/lib/**/*.spec.ts',
        '<rootDir>/test/chaos/*.spec.ts',
        '<rootDir>/test/docs/*.spec.ts',
      ],
      testPathIgnorePatterns: ['\\.int\\.spec\\.ts$'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.int.spec.ts', '<rootDir>/test/**/*.int.spec.ts'],
      testPathIgnorePatterns: ['/test/machines/'],
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
    },
    {
      ...shared,
      // Whole deployments as machines on network namespaces (root only): npm test runs them after the
      // others, one file at a time, so that ten machines' servers never crowd a timing-sensitive test.
      displayName: 'machines',
      testMatch: ['<rootDir>/test/machines/**/*.int.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
    },
    {
      ...shared,
      displayName: 'integration-3-buckets',
      testMatch: INVARIANTS_ON_BUCKETS.map((file) => `<rootDir>/${file}`),
      setupFiles: ['<rootDir>/test/support/three-buckets.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-setup.ts'],
    },
  ],
};
