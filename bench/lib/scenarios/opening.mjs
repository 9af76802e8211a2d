/**
 * (h) The opening second: a flash sale's crowd arrives at processes that have just started — fresh
 * connections, code the JIT has not seen, pools not yet filled — so the stack is measured as `npm start`
 * leaves it, not only warm.
 *
 * For each number of API processes worth comparing on this machine (1, one per core, and the default),
 * SETTINGS.openingRounds rounds, the process counts taking turns so that the machine's drift reaches them
 * alike; the ratios the targets judge are the median round's:
 * - **Opening burst**: a fresh API (those processes, as `npm start` runs them) and a fresh worker on this
 *   run's database and Redis. As soon as `/health/ready` answers, a sale of OPENING.stock units is created
 *   and OPENING.buyers distinct buyers hit it on OPENING.connections connections — the first purchase
 *   within a second of readiness. Then the same burst again on a new sale, on the same processes now
 *   warm: the cold/warm ratios of req/s and p99.
 * - **Whole short sale**: fresh processes again, SHORT_SALE.buyers buyers on the run's connections, every
 *   one accepted, until the worker has written them; then, on the same processes, a steady state (a
 *   warm-up, then a timed run) measured the same way: machine CPU per purchase of the short sale against
 *   the steady state's. Last, the same short sale again on the processes now warm, which tells the cost of
 *   the processes' coldness from that of a run this short.
 *
 * The main stack's worker is stopped meanwhile (the fresh one must be the only one writing, for its CPU
 * to be the whole cost) and replaced by a fresh one at the end.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { adminSales, httpClient } from '../api-client.mjs';
import { APP_DIST, require } from '../app-dist.mjs';
import { ratio, round } from '../format.mjs';
import { waitForOrdersWritten } from '../orders.mjs';
import { startProfile, stopProfile, profiledChildOptions } from '../profiler.mjs';
import { childPids, perAcceptedPurchase } from '../sampling.mjs';
import { SETTINGS, log } from '../settings.mjs';
import { startChild, startWorker, state, stopChild, stopWorker, waitForHttp, waitForLog } from '../stack.mjs';
import { freePort } from '../../../scripts/lib/ports.mjs';

/** The opening burst: distinct buyers, connections, and the sale's stock (most buyers are refused). */
export const OPENING = { buyers: 2_000, connections: 200, stock: 500 };
/** The whole short sale: every buyer buys one unit. */
export const SHORT_SALE = { buyers: 5_000 };

export async function runOpening(run) {
  const { defaultApiInstances } = require('@flash-sale/config');
  const cores = availableParallelism();
  const defaultProcesses = defaultApiInstances(cores);
  const counts = [...new Set([1, cores, defaultProcesses])].sort((a, b) => a - b);
  const rounds = new Map(counts.map((processes) => [processes, []]));
  await stopWorker();
  try {
    for (let roundNo = 1; roundNo <= SETTINGS.openingRounds; roundNo++) {
      for (const processes of counts) {
        // Profiled in the first round only (BENCH_CPU_PROF=1): one profile per scenario and process count.
        const profiled = roundNo === 1;
        const burst = await measureOpeningBurst(run, processes, roundNo, profiled);
        const shortSale = await measureShortSale(run, processes, roundNo, profiled);
        rounds.get(processes).push({ roundNo, ...burst, ...shortSale });
      }
    }
  } finally {
    startWorker(run.appEnv); // the next scenarios' worker, fresh
    await waitForLog(state.worker, 'Worker consuming');
  }
  const configurations = counts.map((processes) =>
    medianOf(processes, processes === defaultProcesses, rounds.get(processes)),
  );
  run.results.opening = {
    cores,
    defaultProcesses,
    settings: { ...OPENING, shortSale: SHORT_SALE, rounds: SETTINGS.openingRounds },
    configurations,
  };
  log(
    `opening, median of ${SETTINGS.openingRounds} round(s): ${configurations
      .map(
        (c) =>
          `${c.processes} process(es): burst cold/warm req/s ×${c.coldVsWarm.reqPerSec}, p99 ×${c.coldVsWarm.p99}; ` +
          `short sale CPU/purchase ×${c.shortSaleVsSteady}`,
      )
      .join(' | ')}`,
  );
}

/** One process count's rounds, and the median of each figure the report compares and the targets judge. */
function medianOf(processes, isDefault, rounds) {
  const median = (pick) => {
    const values = rounds.map(pick).sort((a, b) => a - b);
    const middle = Math.floor(values.length / 2);
    return values.length % 2 === 1 ? values[middle] : round((values[middle - 1] + values[middle]) / 2, 3);
  };
  return {
    processes,
    isDefault,
    rounds,
    coldVsWarm: {
      reqPerSec: median((r) => r.coldVsWarm.reqPerSec),
      p99: median((r) => r.coldVsWarm.p99),
      machineCpuPerPurchase: median((r) => r.coldVsWarm.machineCpuPerPurchase),
    },
    coldConnectP99Ms: median((r) => r.cold.connect.p99),
    shortSaleVsSteady: median((r) => r.shortSaleVsSteady),
    shortSaleWarmVsSteady: median((r) => r.shortSaleWarmVsSteady),
    shortSale: {
      reqPerSec: median((r) => r.shortSale.reqPerSec),
      machineCpuUs: median((r) => r.shortSale.perAccepted.machineCpuUs),
    },
  };
}

/** A fresh stack's opening burst, then the same burst warm. */
async function measureOpeningBurst(run, processes, roundNo, profiled) {
  const stack = await startFreshStack(run, processes, 'burst', profiled);
  const label = (when) => `opening burst, ${when}, ${processes} API process(es), round ${roundNo}`;
  try {
    const cold = await openingBurst(run, stack, label('cold'), true);
    const warm = await openingBurst(run, stack, label('warm'), false);
    return {
      readyToFirstPurchaseMs: cold.readyToFirstPurchaseMs,
      cold: cold.summary,
      warm: warm.summary,
      coldVsWarm: {
        reqPerSec: ratio(cold.summary.reqPerSec, warm.summary.reqPerSec),
        p99: ratio(cold.summary.latencyMs.p99, warm.summary.latencyMs.p99),
        machineCpuPerPurchase: ratio(cold.summary.perAccepted.machineCpuUs, warm.summary.perAccepted.machineCpuUs),
      },
    };
  } finally {
    await stack.stop();
  }
}

async function openingBurst(run, stack, label, cold) {
  const sale = await stack.sales.create(`bench ${label}`, OPENING.stock);
  const pairs = await run.buyers.preparePairs(sale.id, OPENING.buyers);
  const readyToFirstPurchaseMs = round(performance.now() - stack.readyAt, 0);
  if (cold) log(`${label}: first purchase ${readyToFirstPurchaseMs} ms after readiness`);
  const profile = cold && (await stack.startProfile());
  const summary = await run.load({
    ...stack.target,
    key: cold ? 'openingCold' : 'openingWarm',
    label,
    saleId: sale.id,
    pairs,
    expect: [202, 410],
    amount: OPENING.buyers,
    connections: OPENING.connections,
    settle: (statuses) => waitForOrdersWritten(sale.id, statuses[202] ?? 0),
  });
  if (profile) await stack.stopProfile(run, 'opening', 'cold opening burst');
  summary.perAccepted = perAcceptedPurchase(summary);
  run.answeredAsExpected(`${label}: every answer 202 or 410`, summary);
  run.check(
    `${label}: exactly the stock sold`,
    summary.statusCounts[202] === OPENING.stock,
    JSON.stringify(summary.statusCounts),
  );
  return { summary, readyToFirstPurchaseMs };
}

/** A fresh stack sells SHORT_SALE.buyers units to as many buyers, then runs warm as long as the live sale. */
async function measureShortSale(run, processes, roundNo, profiled) {
  const stack = await startFreshStack(run, processes, 'short sale', profiled);
  const ofRound = `${processes} API process(es), round ${roundNo}`;
  try {
    const sale = await stack.sales.create(`bench short sale, ${ofRound}`, SHORT_SALE.buyers);
    const shortSaleProfiled = await stack.startProfile();
    const shortSale = await run.load({
      ...stack.target,
      key: 'shortSale',
      label: `whole short sale from a fresh start, ${ofRound}`,
      saleId: sale.id,
      pairs: await run.buyers.preparePairs(sale.id, SHORT_SALE.buyers),
      expect: 202,
      amount: SHORT_SALE.buyers,
      settle: (statuses) => waitForOrdersWritten(sale.id, statuses[202] ?? 0),
    });
    if (shortSaleProfiled) await stack.stopProfile(run, 'short-sale', 'whole short sale from a fresh start');
    shortSale.perAccepted = perAcceptedPurchase(shortSale);
    run.answeredAsExpected(`short sale, ${ofRound}: every answer 202`, shortSale);

    const steadySale = await stack.sales.create(`bench steady state, ${ofRound}`, SETTINGS.liveStock);
    // As the live scenario: a warm-up's worth of buyers, then enough for any rate this machine reaches.
    const timed = async (key, durationS, alreadyWritten) => {
      const buyers = key === 'steady' ? SETTINGS.users : Math.min(SETTINGS.users, 60_000);
      const pairs = await run.buyers.preparePairs(steadySale.id, buyers);
      return run.load({
        ...stack.target,
        key,
        label: `steady state (${key}), ${ofRound}`,
        saleId: steadySale.id,
        pairs,
        expect: 202,
        durationS,
        settle: (statuses) => waitForOrdersWritten(steadySale.id, alreadyWritten + (statuses[202] ?? 0)),
      });
    };
    const warmup = await timed('steadyWarmup', SETTINGS.warmupS, 0);
    const steadyProfiled = await stack.startProfile();
    const steady = await timed('steady', SETTINGS.durationS, warmup.statusCounts[202] ?? 0);
    if (steadyProfiled) await stack.stopProfile(run, 'steady', 'steady state after the short sale');
    steady.perAccepted = perAcceptedPurchase(steady);
    // The same short sale again on the processes now warm: what a short run costs whatever the processes'
    // age (its start and its end, the orders written after the last answer) apart from their coldness.
    const warmSale = await stack.sales.create(`bench short sale again, warm, ${ofRound}`, SHORT_SALE.buyers);
    const warmPairs = await run.buyers.preparePairs(warmSale.id, SHORT_SALE.buyers);
    const warmProfiled = await stack.startProfile();
    const shortSaleWarm = await run.load({
      ...stack.target,
      key: 'shortSaleWarm',
      label: `whole short sale again, warm, ${ofRound}`,
      saleId: warmSale.id,
      pairs: warmPairs,
      expect: 202,
      amount: SHORT_SALE.buyers,
      settle: (statuses) => waitForOrdersWritten(warmSale.id, statuses[202] ?? 0),
    });
    if (warmProfiled) await stack.stopProfile(run, 'short-sale-warm', 'whole short sale again, warm');
    shortSaleWarm.perAccepted = perAcceptedPurchase(shortSaleWarm);
    return {
      shortSale,
      steady,
      shortSaleWarm,
      shortSaleVsSteady: ratio(shortSale.perAccepted.machineCpuUs, steady.perAccepted.machineCpuUs),
      shortSaleWarmVsSteady: ratio(shortSaleWarm.perAccepted.machineCpuUs, steady.perAccepted.machineCpuUs),
    };
  } finally {
    await stack.stop();
  }
}

/**
 * A fresh API of `processes` processes (main.js alone, or cluster.js as `npm start` runs more) and a
 * fresh worker, on the run's database and Redis; ready when the API's `/health/ready` answers and the
 * worker consumes.
 */
async function startFreshStack(run, processes, purpose, profiled) {
  const port = await freePort();
  const env = { ...run.appEnv, PORT: String(port), API_INSTANCES: String(processes) };
  const entry = processes === 1 ? APP_DIST.api : APP_DIST.apiCluster;
  const startedAt = performance.now();
  const api = startChild(`api-${purpose.replace(/\s+/g, '-')}-${processes}`, entry, env, profiledChildOptions('api'));
  const worker = startWorker(env, { profiled: true });
  const baseUrl = `http://127.0.0.1:${port}`;
  await Promise.all([waitForHttp(`${baseUrl}/health/ready`, api), waitForLog(worker, 'Worker consuming')]);
  const readyAt = performance.now();
  log(
    `fresh stack for the ${purpose}: ${processes} API process(es) ready ${round((readyAt - startedAt) / 1000, 1)} s after start`,
  );
  const apiPids = processes === 1 ? [api.pid] : [api.pid, ...childPids(api.pid)];
  const http = httpClient(baseUrl);
  return {
    processes,
    readyAt,
    sales: await adminSales(http),
    target: { baseUrl, pids: { api: apiPids, worker: worker.pid } },
    // The API and the worker; only a lone API process can be profiled (the preload's IPC channel is the launcher's).
    startProfile: async () =>
      processes === 1 &&
      profiled &&
      SETTINGS.cpuProfile &&
      (await Promise.all([startProfile(api), startProfile(worker)]), true),
    stopProfile: async (r, name, title) => {
      r.results.profiles ??= [];
      await stopProfile(api, 'api', r.results.profiles, `api-${name}-${processes}`, `API CPU profile, ${title}`);
      await stopProfile(
        worker,
        'worker',
        r.results.profiles,
        `worker-${name}-${processes}`,
        `Worker CPU profile, ${title}`,
      );
    },
    async stop() {
      await stopChild(api);
      await stopWorker();
    },
  };
}
