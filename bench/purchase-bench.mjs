#!/usr/bin/env node
/**
 * `npm run bench`: purchase-path benchmark of the built API and worker, on throwaway state
 * (bench/README.md says what each scenario shows and how to read the figures).
 *
 * One run:
 *   0. builds (`tsc -b`) only if a built file it needs is missing (lib/stack.mjs);
 *   1. creates a private database `flash_sale_bench_<rand>` and private Redis key / queue prefixes (on a
 *      private redis-server unless REDIS_URL is set), then starts the API and the worker as children;
 *   2. creates the sales through the admin API;
 *   3. (a) ceiling: the app's reservation script behind a bare Fastify server (lib/scenarios/ceiling.mjs);
 *   4. (b) live sale, then sold-out sale, then buyers of a sold-out sale coming back; each request a different (guest JWT, submit token) pair
 *      prepared beforehand (lib/scenarios/live.mjs, lib/buyers.mjs);
 *   4b. (g) waiting room: a crowd joins a room sale and polls (lib/scenarios/room.mjs);
 *   5. (c) drain: purchases pile up with the worker stopped, a fresh worker writes them (lib/scenarios/drain.mjs);
 *   6. (d) strategies: one sale per strategy, same stock and buyers, audited (lib/scenarios/strategies.mjs);
 *   6b. (i) creating a sale: POST /api/admin/sales timed for every strategy (lib/scenarios/create-sale.mjs);
 *   7. (f) scale: the hot sale with 1 and 2 API processes, and over 1 and 3 buckets on a local Redis
 *      Cluster (lib/scenarios/scale.mjs);
 *   8. (e) idle worker: many live sold-out sales, no load (lib/scenarios/idle.mjs);
 *   9. prints a markdown table, checks the targets, writes bench/results/latest.{json,md,svg} (+ .png)
 *      (lib/report/);
 *  10. always cleans up: children, databases, Redis keys, the cluster (also on failure and Ctrl-C).
 *
 * Flags: `--only scale` runs the scale section alone (its report: bench/results/scale.{md,json});
 * `--skip scale` runs everything else; the same for `opening` and `create-sale`.
 *
 * Environment (all optional): BENCH_DURATION · BENCH_WARMUP · BENCH_CONNECTIONS · BENCH_USERS ·
 * BENCH_DRAIN_ORDERS · BENCH_STRATEGY_STOCK · BENCH_STRATEGY_BUYERS · BENCH_STRATEGY_WARMUP · BENCH_CREATE_SALES ·
 * BENCH_DRAIN_BASELINE · BENCH_IDLE_DURATION · BENCH_SCALE_PROCESSES · BENCH_SCALE_BUCKETS · BENCH_CPU_PROF=1 ·
 * REDIS_URL · BENCH_MYSQL_URL
 * (defaults and meaning: lib/settings.mjs and bench/README.md).
 */
import { mkdirSync } from 'node:fs';
import { parseCommandLine } from '../scripts/lib/cli.mjs';
import { ROOT } from './lib/app-dist.mjs';
import { writeCreateSaleReport } from './lib/report/create-sale.mjs';
import { writeOpeningReport } from './lib/report/opening.mjs';
import { writeScaleReport } from './lib/report/scale.mjs';
import { writeReport } from './lib/report/write-report.mjs';
import { createRunContext } from './lib/run-context.mjs';
import { runCeiling } from './lib/scenarios/ceiling.mjs';
import { runCreateSale } from './lib/scenarios/create-sale.mjs';
import { runDrain } from './lib/scenarios/drain.mjs';
import { runOpening } from './lib/scenarios/opening.mjs';
import { measureIdle } from './lib/scenarios/idle.mjs';
import {
  auditEndpointSales,
  createEndpointSales,
  runLiveSale,
  runReturningBuyers,
  runSoldOutSale,
} from './lib/scenarios/live.mjs';
import { runRoomPolls } from './lib/scenarios/room.mjs';
import { runScale } from './lib/scenarios/scale.mjs';
import { runStrategies } from './lib/scenarios/strategies.mjs';
import { TMP, log } from './lib/settings.mjs';
import { cleanup, ensureBuilt, startStack, state } from './lib/stack.mjs';

/**
 * Sections that can be run alone or left out. The others depend on one another (every ratio is to the
 * ceiling; the idle scenario's background is subtracted from the sold-out figures) and always run together.
 */
const OPTIONAL_SECTIONS = ['scale', 'opening', 'create-sale'];

const USAGE = `Usage: npm run bench -- [options]   (bench/README.md)
  --only SECTION   run one section alone: ${OPTIONAL_SECTIONS.join(', ')}
  --skip SECTION   leave a section out (repeatable)
  --help           this text
Settings come from the environment (BENCH_DURATION, BENCH_CONNECTIONS…): bench/README.md.`;

function chosenSections(argv) {
  const { values } = parseCommandLine({
    name: 'bench',
    usage: USAGE,
    args: argv,
    options: { only: { type: 'string' }, skip: { type: 'string', multiple: true } },
  });
  for (const name of [values.only, ...(values.skip ?? [])].filter((value) => value !== undefined)) {
    if (!OPTIONAL_SECTIONS.includes(name)) {
      console.error(`bench: unknown section "${name}": --only and --skip take ${OPTIONAL_SECTIONS.join(', ')}`);
      process.exit(2);
    }
  }
  return { only: values.only, skip: new Set(values.skip ?? []) };
}

async function main() {
  const sections = chosenSections(process.argv.slice(2));
  process.chdir(ROOT);
  mkdirSync(TMP, { recursive: true });
  ensureBuilt();
  const run = await createRunContext(await startStack());
  if (sections.only === 'scale') {
    await runScale(run);
    return writeScaleReport(run.results);
  }
  if (sections.only === 'opening') {
    await runOpening(run);
    return writeOpeningReport(run.results);
  }
  if (sections.only === 'create-sale') {
    await runCreateSale(run);
    return writeCreateSaleReport(run.results);
  }
  const endpointSales = await createEndpointSales(run);
  await run.buyers.checkSameSigningKey(run.http, endpointSales.live.id);
  await runCeiling(run);
  await runLiveSale(run, endpointSales.live.id);
  await runSoldOutSale(run, endpointSales.soldOut.id);
  await runReturningBuyers(run);
  await runRoomPolls(run);
  await auditEndpointSales(run, endpointSales);
  await runDrain(run);
  await runStrategies(run);
  if (!sections.skip.has('create-sale')) await runCreateSale(run);
  if (!sections.skip.has('opening')) await runOpening(run);
  if (!sections.skip.has('scale')) await runScale(run);
  // Last, so that its open sales weigh on no other scenario.
  run.results.idle = await measureIdle(run);
  return writeReport(run.results);
}

main().then(
  async (exitCode) => {
    await cleanup();
    process.exit(exitCode);
  },
  async (error) => {
    if (state.interrupted) return; // the signal handler below cleans up and exits
    console.error(`[bench] FAILED: ${error?.stack ?? error}`);
    state.keepLogs = true;
    await cleanup();
    process.exit(1);
  },
);
// A throw outside the promise chain (e.g. inside autocannon) must clean up too, not leave orphans.
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, async (error) => {
    console.error(`[bench] FAILED (${event}): ${error?.stack ?? error}`);
    state.keepLogs = true;
    await cleanup();
    process.exit(1);
  });
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, async () => {
    log(`${signal}: cleaning up`);
    state.interrupted = true;
    await cleanup();
    process.exit(130);
  });
}
