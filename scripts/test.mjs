// `npm test`: build (type-checks every project); then, two at a time, the storefront's component tests, lint,
// format, the other type checks and the dependency rules; then the unit, integration and end-to-end tests on
// the real local Redis and MariaDB (the e2e tests drive the built storefront in Debian's Chromium); then the
// deployment as machines on network namespaces (skipped, saying why, where they cannot be made). A failed
// step stops the run (the checks, once the others running beside it have ended).
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';

/** Test files run at once (`TEST_WORKERS=1 npm test` runs them one by one). */
const TEST_WORKERS = process.env['TEST_WORKERS'] ?? '3';
/** `npm test -- <jest arguments>`: only these files or tests. */
const chosen = process.argv.slice(2);
/**
 * The checks that read the sources and need nothing built but the libraries run two at a time: each
 * is mostly one busy thread, so two fill two cores (about a minute less than one after the other).
 */
const CHECKS_AT_ONCE = 2;

const build = ['build + typecheck', 'npx', ['tsc', '-b', 'tsconfig.json']];
const checks = [
  ['storefront component tests', 'npm', ['run', '--silent', 'test', '-w', '@flash-sale/web']],
  ['lint', 'npm', ['run', '--silent', 'lint']],
  ['format', 'npx', ['prettier', '--check', '.']],
  ['typecheck tests', 'npx', ['tsc', '-p', 'tsconfig.spec.json']],
  ['typecheck storefront', 'npx', ['tsc', '-p', 'apps/web/tsconfig.json']],
  ['typecheck load tests', 'npx', ['tsc', '-p', 'load-tests/tsconfig.json']],
  ['dependency rules (no folder cycles)', 'npm', ['run', '--silent', 'deps']],
  ['load tests: no network imports', 'node', ['scripts/check-load-test-imports.mjs']],
];
const afterChecks = [
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
    [
      'jest',
      '--ci',
      `--maxWorkers=${TEST_WORKERS}`,
      ...(chosen.length
        ? [...chosen, '--forceExit']
        : ['--selectProjects', 'unit', 'integration', 'integration-3-buckets', 'e2e']),
    ],
  ],
];
/**
 * The deployment as machines (test/machines: ten network namespaces, each with its servers), after the
 * others and one file at a time: beside other files it would take the cores their timings assume.
 */
const machineSteps = chosen.length
  ? []
  : [
      [
        'tests on machines (network namespaces)',
        'npx',
        ['jest', '--ci', '--selectProjects', 'machines', '--maxWorkers=1'],
      ],
    ];

const ENV = { ...process.env, NX_DAEMON: 'false' };
const seconds = (started) => `${((Date.now() - started) / 1000).toFixed(1)} s`;

/** A step in the foreground, its output as it comes. */
function runStep([name, command, args]) {
  const started = Date.now();
  console.log(`\n▶ ${name}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: ENV });
  if (result.status !== 0) {
    console.error(`✖ ${name} failed`);
    process.exit(result.status ?? 1);
  }
  console.log(`✔ ${name} (${seconds(started)})`);
}

/** A step beside others: its output is held and printed whole when it ends, so steps never interleave. */
function runHeld([name, command, args]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...ENV, FORCE_COLOR: '0' } });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code) => {
      console.log(`\n▶ ${name}`);
      process.stdout.write(Buffer.concat(output));
      if (code === 0) console.log(`✔ ${name} (${seconds(started)})`);
      else console.error(`✖ ${name} failed`);
      resolve(code === 0);
    });
  });
}

/** Runs `steps` at most `atOnce` at a time; stops the run after they end if any failed. */
async function runAtOnce(steps, atOnce) {
  const queue = [...steps];
  let failed = false;
  const lane = async () => {
    for (let step = queue.shift(); step; step = queue.shift()) failed = !(await runHeld(step)) || failed;
  };
  await Promise.all(Array.from({ length: atOnce }, lane));
  if (failed) process.exit(1);
}

runStep(build);
await runAtOnce(checks, CHECKS_AT_ONCE);
[...afterChecks, ...machineSteps].forEach(runStep);
