// `npm test`: build (type-checks every project), lint, the storefront's component tests, then the
// unit, integration and end-to-end tests on the real local Redis and MariaDB (the e2e tests drive the
// built storefront in Debian's Chromium). Each step stops the run when it fails.
import { spawnSync } from 'node:child_process';

/**
 * The invariant tests again, on sales spread over three buckets (docs/architecture.md "Hot sales:
 * buckets"): every promise must hold whatever the bucket count.
 */
const INVARIANTS_ON_BUCKETS = [
  'test/purchase-flow.int.spec.ts',
  'test/redis-cluster-flow.int.spec.ts',
  'test/lease-refill.int.spec.ts',
  'test/outage-sequences.int.spec.ts',
  'test/redis-outage.int.spec.ts',
  'test/stale-redis.int.spec.ts',
  'test/sold-out-gate.int.spec.ts',
  'test/sold-out-flood.int.spec.ts',
  'test/durable-ack.int.spec.ts',
  'test/incarnation-race.int.spec.ts',
  'test/idle-sales.int.spec.ts',
  'test/order-expiry.int.spec.ts',
  'test/order-payment.int.spec.ts',
  'test/order-recovery.int.spec.ts',
  'test/chaos-explorer.int.spec.ts',
  'test/answers-after-outage.int.spec.ts',
  'test/sale-window.int.spec.ts',
];

const steps = [
  ['build + typecheck', 'npx', ['tsc', '-b', 'tsconfig.json']],
  ['typecheck tests', 'npx', ['tsc', '-p', 'tsconfig.spec.json']],
  ['typecheck load tests', 'npx', ['tsc', '-p', 'load-tests/tsconfig.json']],
  ['load tests: no network imports', 'node', ['scripts/check-load-test-imports.mjs']],
  ['typecheck storefront', 'npx', ['tsc', '-p', 'apps/web/tsconfig.json']],
  ['lint', 'npm', ['run', '--silent', 'lint']],
  ['dependency rules (no folder cycles)', 'npm', ['run', '--silent', 'deps']],
  ['format', 'npx', ['prettier', '--check', '.']],
  ['storefront component tests', 'npm', ['run', '--silent', 'test', '-w', '@flash-sale/web']],
  ['build storefront (unless built from these sources)', 'node', ['scripts/build-storefront.mjs']],
  // --forceExit: a test that leaves a socket behind must not hang CI after the verdict is in.
  ['tests', 'npx', ['jest', '--ci', '--forceExit', ...process.argv.slice(2)]],
];
if (process.argv.length <= 2) {
  steps.push([
    'invariant tests on sales of 3 buckets',
    'npx',
    ['jest', '--ci', '--forceExit', ...INVARIANTS_ON_BUCKETS],
    { TEST_SALE_BUCKETS: '3' },
  ]);
}

for (const [name, command, args, env = {}] of steps) {
  const started = Date.now();
  console.log(`\n▶ ${name}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false', ...env } });
  if (result.status !== 0) {
    console.error(`✖ ${name} failed`);
    process.exit(result.status ?? 1);
  }
  console.log(`✔ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
