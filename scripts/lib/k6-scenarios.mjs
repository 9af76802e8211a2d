// The k6 scenarios (load-tests/*.ts) and their plain-JavaScript bundles, for `npm run k6` and
// `npm run k6:bundle`. k6 runs TypeScript itself from 0.57; older k6 (0.48 and later) runs the bundles:
// esbuild strips the types, follows a scenario's imports (its lib/ and libs/contract) into one file and
// lowers the syntax to ES2015, which k6's JavaScript runtime (goja) runs since long before 0.57; k6's
// own modules (`k6`, `k6/http`, …) stay imports.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const LOAD_TESTS = path.join(ROOT, 'load-tests');
export const BUNDLES = path.join(LOAD_TESTS, 'dist');

/** The first k6 that runs the .ts files as they are. */
export const K6_RUNS_TYPESCRIPT = [0, 57];

/** The scenarios' names (`flash-sale-burst`, …): the .ts files at the top of load-tests/. */
export function scenarioNames() {
  return readdirSync(LOAD_TESTS)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => path.basename(name, '.ts'))
    .sort();
}

/** Writes load-tests/dist/<scenario>.js for every scenario; returns their paths. */
export async function bundleScenarios() {
  const { build } = await import('esbuild');
  const entryPoints = scenarioNames().map((name) => path.join(LOAD_TESTS, `${name}.ts`));
  await build({
    entryPoints,
    outdir: BUNDLES,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2015',
    external: ['k6', 'k6/*'],
    logLevel: 'warning',
  });
  return scenarioNames().map((name) => path.join(BUNDLES, `${name}.js`));
}

/** `[major, minor, patch]` from `k6 version`'s output (`k6 v1.3.0 (…)`), or undefined. */
export function parseK6Version(output) {
  const match = /\bv(\d+)\.(\d+)\.(\d+)/.exec(output);
  return match ? match.slice(1, 4).map(Number) : undefined;
}

/** Whether this k6 version runs the .ts scenarios itself. */
export function runsTypeScript(version) {
  const [major, minor] = version;
  return major > K6_RUNS_TYPESCRIPT[0] || (major === K6_RUNS_TYPESCRIPT[0] && minor >= K6_RUNS_TYPESCRIPT[1]);
}
