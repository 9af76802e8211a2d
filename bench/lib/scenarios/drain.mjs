/**
 * (c) The drain: with the worker stopped, BENCH_DRAIN_ORDERS purchases pile up unwritten (however they
 * are handed to it: queue jobs, a stream); a fresh worker then writes them, and orders/s is measured
 * from the first order row to the last. The sale is then audited.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatCpu, round } from '../format.mjs';
import { measureDrain, ordersWritten, transactionCounters } from '../orders.mjs';
import { startProfile, stopProfile } from '../profiler.mjs';
import { cpuPerResponse, diffCommandStats, redisCommandStats } from '../sampling.mjs';
import { SETTINGS, log } from '../settings.mjs';
import { startWorker, state, stopWorker } from '../stack.mjs';

export async function runDrain(run) {
  log('stopping the worker');
  await stopWorker();
  const sale = await run.sales.create('bench drain', SETTINGS.drainOrders);
  const queued = await fillBacklog(run, sale.id);
  const commitsBefore = await transactionCounters();
  const drain = await drainBacklog(run, sale.id, queued);
  const commitsAfter = await transactionCounters();
  drain.mysqlTransactions = {
    // Server-wide counter deltas: anything else using this MariaDB during the drain is counted too.
    commits: commitsAfter.Com_commit - commitsBefore.Com_commit,
    rollbacks: commitsAfter.Com_rollback - commitsBefore.Com_rollback,
  };
  drain.ordersPerTransaction =
    drain.mysqlTransactions.commits > 0 ? round(drain.rows / drain.mysqlTransactions.commits) : null;
  drain.audit = await run.sales.audit(sale.id);
  run.results.drain = drain;
  log(
    `drain: ${drain.rows} rows, ${drain.ordersPerSec} orders/s (first→last row ${drain.firstToLastS}s; ` +
      `worker start→last row ${drain.workerStartToLastS}s), ~${drain.mysqlTransactions.commits} commits, ` +
      `audit ok=${drain.audit.ok}; CPU ${formatCpu(drain.cpu)}; per order from the first rows on: ` +
      `worker ${drain.cpuUsPerOrderWhileWriting.worker} µs + MariaDB ${drain.cpuUsPerOrderWhileWriting.mysql} µs`,
  );
  run.check('drain: every reservation became a row', drain.rows === queued, `${drain.rows} of ${queued}`);
  run.check('audit drain sale ok', drain.audit.ok === true, JSON.stringify(drain.audit));
}

/** The purchases the drain will write, accepted while no worker runs; returns how many were accepted. */
async function fillBacklog(run, saleId) {
  const fill = await run.load({
    key: 'fill',
    label: 'purchase, worker stopped',
    saleId,
    pairs: await run.buyers.preparePairs(saleId, SETTINGS.drainOrders + SETTINGS.connections * 2),
    expect: 202,
    amount: SETTINGS.drainOrders,
  });
  run.results.scenarios.push(fill);
  const queued = fill.statusCounts[202] ?? 0;
  log(`${queued} reservations accepted; ${await ordersWritten(saleId)} orders written (worker stopped)`);
  run.check('drain: all purchases accepted', queued === SETTINGS.drainOrders, `${queued} of ${SETTINGS.drainOrders}`);
  return queued;
}

/** A fresh worker writes the backlog; its CPU and Redis time per order run from its start (boot included). */
async function drainBacklog(run, saleId, queued) {
  const workerStartedAt = Date.now();
  const worker = startWorker(run.appEnv, { profiled: true });
  // From its boot on (the backlog is there already): the profile covers the whole drain.
  await startProfile(worker);
  const cpuStartedAt = performance.now();
  const cpuBefore = run.cpu.snapshot({ api: state.api.pid, worker: worker.pid });
  const redisBefore = await redisCommandStats(state.redis);
  // Also from the first rows seen on: what writing an order costs once the worker is up (its boot, a
  // fixed cost, weighs on a backlog of any size only once).
  let writing;
  const drain = await measureDrain(saleId, queued, workerStartedAt, (rowsSeen) => {
    writing = { rowsSeen, at: performance.now(), cpu: run.cpu.snapshot({ api: state.api.pid, worker: worker.pid }) };
  });
  drain.cpu = run.cpu.since(cpuBefore);
  drain.cpuUsPerOrder = cpuPerResponse(
    run.cpu.since(cpuBefore, { digits: 3 }),
    (performance.now() - cpuStartedAt) / 1000,
    drain.rows,
  );
  drain.cpuUsPerOrderWhileWriting = cpuPerResponse(
    run.cpu.since(writing.cpu, { digits: 3 }),
    (performance.now() - writing.at) / 1000,
    drain.rows - writing.rowsSeen,
  );
  drain.cpuUsPerOrderWhileWriting.orders = drain.rows - writing.rowsSeen;
  drain.redisCommands = diffCommandStats(redisBefore, await redisCommandStats(state.redis), drain.rows);
  // The worker finishes its last hand-off bookkeeping (job completion or stream acks) just after the last
  // commit; nothing the bench can count without knowing the hand-off, so give it a moment to go quiet.
  await sleep(1_000);
  await stopProfile(worker, 'worker', run.results.profiles, 'worker-drain', 'Worker CPU profile, drain');
  return drain;
}
