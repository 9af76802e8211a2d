// `npm run k6 -- <scenario> [k6 run options]`: runs a load-test scenario on whatever k6 is installed.
// k6 0.57 and later run load-tests/<scenario>.ts as it is; an older k6 (from 0.48) runs its bundle,
// written first (load-tests/dist/<scenario>.js; scripts/lib/k6-scenarios.mjs). k6 runs from the
// repository root, so the reports land in load-tests/results/; its exit code is this command's.
//
//   npm run k6 -- flash-sale-burst
//   npm run k6 -- strategy-comparison -e STRATEGIES=redis-lua,naive-unsafe
//   K6=/opt/k6-v0.48.0/k6 npm run k6 -- stampede -e USERS=200      # another k6 binary
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  bundleScenarios,
  BUNDLES,
  K6_RUNS_TYPESCRIPT,
  LOAD_TESTS,
  parseK6Version,
  ROOT,
  runsTypeScript,
  scenarioNames,
} from './lib/k6-scenarios.mjs';

const k6 = process.env.K6 || 'k6';
const [requested, ...k6Options] = process.argv.slice(2);
const scenarios = scenarioNames();
const usage =
  `usage: npm run k6 -- <scenario> [k6 run options]   (K6=<path> for another k6 binary)\n` +
  `scenarios: ${scenarios.join(', ')}`;

if (requested === '--help' || requested === '-h') {
  console.log(usage);
  process.exit(0);
}
// `flash-sale-burst`, `flash-sale-burst.ts` or `load-tests/flash-sale-burst.ts` all name the scenario.
const scenario = requested && path.basename(requested).replace(/\.(ts|js)$/, '');
if (!scenario || requested.startsWith('-')) {
  console.error(`k6: ${requested ? `"${requested}" is not a scenario` : 'no scenario named'} (npm run k6 -- --help)`);
  process.exit(2);
}
if (!scenarios.includes(scenario)) {
  console.error(`No scenario "${requested}".\n${usage}`);
  process.exit(2);
}

const probe = spawnSync(k6, ['version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.error(
    `Could not run "${k6} version" (${probe.error?.message ?? `exit ${probe.status}`}). Install k6 ` +
      `(https://grafana.com/docs/k6/latest/set-up/install-k6/), or set K6 to its path.`,
  );
  process.exit(2);
}
const version = parseK6Version(probe.stdout);
if (!version) {
  console.error(`Could not read a version in "${k6} version": ${probe.stdout.trim()}`);
  process.exit(2);
}

let script = path.join(LOAD_TESTS, `${scenario}.ts`);
const shown = `k6 ${version.join('.')}`;
if (runsTypeScript(version)) {
  console.log(`${shown} runs TypeScript: load-tests/${scenario}.ts`);
} else {
  await bundleScenarios();
  script = path.join(BUNDLES, `${scenario}.js`);
  console.log(
    `${shown} is older than ${K6_RUNS_TYPESCRIPT.join('.')}, which cannot read TypeScript: ` +
      `running the bundle load-tests/dist/${scenario}.js (written now from the .ts)`,
  );
}

const child = spawn(k6, ['run', ...k6Options, path.relative(ROOT, script)], { cwd: ROOT, stdio: 'inherit' });
// Ctrl-C reaches k6 itself (the same process group): it stops the load, then still audits and reports.
// Passing it on would make it a second Ctrl-C, which k6 takes as "abort now". A SIGTERM is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
