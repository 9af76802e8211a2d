// `npm test`: build (type-checks every project), lint, the storefront's component tests, then the
// unit, integration and end-to-end tests on the real local Redis and MariaDB (the e2e tests drive the
// built storefront in Debian's Chromium). Each step stops the run when it fails.
import { spawnSync } from 'node:child_process';

/** Test files run at once (`TEST_WORKERS=1 npm test` runs them one by one). */
const TEST_WORKERS = process.env['TEST_WORKERS'] ?? '3';
/** `npm test -- <jest arguments>`: only these files or tests. */
const chosen = process.argv.slice(2);

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
  // Unit, integration (also on sales of 3 buckets: jest.config.js) and e2e tests in one run, three files
  // at a time: most integration tests wait on real processes, timers and failovers rather than
  // computing, so even on two cores three workers finish in about three fifths of two's time
  // (docs/testing.md, "How long it takes"). A run of a few
  // chosen files may run in jest's own process, where a socket a test leaves behind would keep it
  // alive after the verdict: --forceExit there.
  [
    'tests',
    'npx',
    ['jest', '--ci', `--maxWorkers=${TEST_WORKERS}`, ...chosen, ...(chosen.length ? ['--forceExit'] : [])],
  ],
];

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
