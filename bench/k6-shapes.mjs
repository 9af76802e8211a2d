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
import { cpus, loadavg } from 'node:os';
import { agent, BASE_URL } from './lib/k6-shapes/http.mjs';
import { SHAPES } from './lib/k6-shapes/shapes.mjs';
import { importLoadTestsLib } from './lib/load-tests-lib.mjs';

const which = process.argv[2];
const runsFlag = process.argv.indexOf('--runs');
const runs = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 1;
if (!SHAPES[which]) {
  console.error(`usage: node bench/k6-shapes.mjs ${Object.keys(SHAPES).join('|')} [--runs N]`);
  process.exit(2);
}
const lib = await importLoadTestsLib(['shapes.ts']);
for (let run = 1; run <= runs; run++) {
  // The machine's load average, before and after: on a shared machine, other work's CPU shows up as latency.
  const load = () => `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`;
  console.log(`\n--- ${which}, run ${run} of ${runs}, against ${BASE_URL} (${load()})`);
  await SHAPES[which](lib);
  console.log(`    (${load()} at the end)`);
}
await agent.close();
