// `npm run k6:bundle`: one plain-JavaScript file per k6 scenario, for k6 older than 0.57 (which cannot
// run TypeScript). esbuild strips the types, follows the scenario's imports (its lib/ and libs/contract)
// into one file, and lowers the syntax to ES2015, which k6's JavaScript runtime (goja) runs since long
// before 0.57; k6's own modules (`k6`, `k6/http`, …) stay imports. Output: load-tests/dist/<scenario>.js
// (git-ignored), run like the .ts: `k6 run load-tests/dist/flash-sale-burst.js`.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const loadTests = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../load-tests');
const outdir = path.join(loadTests, 'dist');
const scenarios = readdirSync(loadTests)
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
  .map((name) => path.join(loadTests, name));

await build({
  entryPoints: scenarios,
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2015',
  external: ['k6', 'k6/*'],
  logLevel: 'warning',
});
for (const file of scenarios) {
  console.log(`load-tests/dist/${path.basename(file, '.ts')}.js`);
}
