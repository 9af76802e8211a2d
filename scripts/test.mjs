// `npm test`: build (type-checks every project), lint, the storefront's component tests, then the
// unit, integration and end-to-end tests on the real local Redis and MariaDB (the e2e tests drive the
// built storefront in Debian's Chromium). Each step stops the run when it fails.
import { spawnSync } from 'node:child_process';

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
  ['build storefront', 'npm', ['run', '--silent', 'build', '-w', '@flash-sale/web']],
  // --forceExit: a test that leaves a socket behind must not hang CI after the verdict is in.
  ['tests', 'npx', ['jest', '--ci', '--forceExit', ...process.argv.slice(2)]],
];

for (const [name, command, args] of steps) {
  const started = Date.now();
  console.log(`\n▶ ${name}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false' } });
  if (result.status !== 0) {
    console.error(`✖ ${name} failed`);
    process.exit(result.status ?? 1);
  }
  console.log(`✔ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
