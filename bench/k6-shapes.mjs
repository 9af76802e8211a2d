#!/usr/bin/env node
/**
 * The k6 scenarios' default load shapes, replayed from Node (undici) against a running API: what a
 * machine without k6 can measure of them. Each shape comes from load-tests/lib/shapes.ts itself
 * (compiled on the fly by esbuild), so the figures here are those of the shapes k6 will ask for.
 *
 *   node bench/k6-shapes.mjs burst|duplicate-clicks|comparison|stampede|soak [--runs N]
 *
 * BASE_URL (http://localhost:3000), ADMIN_PASSWORD (admin), P95_MS (500); STRATEGY (burst, stampede;
 * naive-unsafe shows the oversell verdict), STRATEGIES (comparison), DURATION_S (soak). The API must run with
 * RATE_LIMIT_PROFILE=load-test (`npm run start:load`), as for k6. Per run it prints both verdicts, the
 * load offered and achieved, latency per endpoint and the p95 margin (bound ÷ p95).
 *
 * Like k6's arrival-rate executors, arrivals are open: a buyer arrives on schedule whatever the API
 * answered before. One connection per buyer in flight, as one VU each.
 */
import { Buffer } from 'node:buffer';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './lib/app-dist.mjs';
import { agent, BASE_URL } from './lib/k6-shapes/http.mjs';
import { SHAPES } from './lib/k6-shapes/shapes.mjs';

async function loadShapes() {
  const out = await build({
    entryPoints: [path.join(ROOT, 'load-tests/lib/shapes.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    external: ['k6', 'k6/*'],
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}

const which = process.argv[2];
const runsFlag = process.argv.indexOf('--runs');
const runs = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 1;
if (!SHAPES[which]) {
  console.error(`usage: node bench/k6-shapes.mjs ${Object.keys(SHAPES).join('|')} [--runs N]`);
  process.exit(2);
}
const lib = await loadShapes();
for (let run = 1; run <= runs; run++) {
  // The machine's load average, before and after: on a shared machine, other work's CPU shows up as latency.
  const load = () => `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`;
  console.log(`\n--- ${which}, run ${run} of ${runs}, against ${BASE_URL} (${load()})`);
  await SHAPES[which](lib);
  console.log(`    (${load()} at the end)`);
}
await agent.close();
