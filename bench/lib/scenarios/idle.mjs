/**
 * (e) The idle worker: IDLE_SALES live redis-lua sales, each sold out through the API (IDLE_SALE_STOCK
 * distinct buyers) and written, then BENCH_IDLE_DURATION s with no load at all. Whatever the worker does
 * per open sale when nothing happens (polling a stream or a queue, refilling leases, reconciling) shows
 * here, times IDLE_SALES. The sales stay open (ending in an hour) throughout. It runs last, so its open
 * sales weigh on no other scenario.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { purchaseAccepted } from '../api-client.mjs';
import { require } from '../app-dist.mjs';
import { formatIdleRedis, round } from '../format.mjs';
import { waitForOrdersWritten } from '../orders.mjs';
import { diffCommandStats, redisCommandStats } from '../sampling.mjs';
import { IDLE_SALE_STOCK, IDLE_SALES, SETTINGS, log } from '../settings.mjs';
import { state } from '../stack.mjs';

export async function measureIdle(run) {
  const { saleIds, written, orders } = await sellOutIdleSales(run);
  await checkListedSoldOut(run, saleIds);
  const settleMs = activityWindowMs(run.appEnv);
  log(`idle: waiting ${Math.round(settleMs / 1000)} s for the sales' activity window to pass`);
  await sleep(settleMs);
  log(`idle: ${orders} orders written; ${SETTINGS.idleS}s with no load`);
  const before = run.cpu.snapshot({ api: state.api.pid, worker: state.worker.pid });
  const redisBefore = await redisCommandStats(state.redis);
  await sleep(SETTINGS.idleS * 1000);
  const idleCpu = run.cpu.since(before, { digits: 1 });
  const redis = diffCommandStats(redisBefore, await redisCommandStats(state.redis), null);
  const idle = {
    sales: IDLE_SALES,
    stockEach: IDLE_SALE_STOCK,
    ordersWritten: orders,
    ordersWrittenAfterS: written.writtenAfterS,
    durationS: SETTINGS.idleS,
    cpu: idleCpu,
    // Server-wide: other clients of this Redis are counted too.
    redisCommandsPerSecond: round(redis.totalCalls / SETTINGS.idleS, 1),
    redisTop: redis.top.map((row) => ({ command: row.command, perSecond: round(row.calls / SETTINGS.idleS, 1) })),
    redisCommandMsPerSecond: round(redis.totalMs / SETTINGS.idleS, 2),
  };
  log(
    `idle: worker ${idleCpu.worker}%, API ${idleCpu.api}%, Redis ${idleCpu.redis}%, MariaDB ${idleCpu.mysql}% of a core; ` +
      `Redis ${formatIdleRedis(idle)}`,
  );
  return idle;
}

/** The sales, created and each sold out through the API, until the worker has written every order. */
async function sellOutIdleSales(run) {
  log(`idle: creating ${IDLE_SALES} sales of stock ${IDLE_SALE_STOCK}`);
  const saleIds = await mapConcurrently(
    Array.from({ length: IDLE_SALES }, (_, i) => i),
    8,
    async (i) => (await run.sales.create(`bench idle ${i}`, IDLE_SALE_STOCK)).id,
  );
  const purchases = [];
  for (const saleId of saleIds) {
    const pairs = await run.buyers.preparePairs(saleId, IDLE_SALE_STOCK);
    for (let i = 0; i < pairs.count; i++) purchases.push({ saleId, body: pairs.body[i], auth: pairs.auth[i] });
  }
  await mapConcurrently(purchases, 16, (p) => purchaseAccepted(run.baseUrl, p.saleId, p.body, p.auth));
  const written = await waitForOrdersWritten(saleIds, purchases.length);
  return { saleIds, written, orders: purchases.length };
}

async function checkListedSoldOut(run, saleIds) {
  const listed = new Map((await run.sales.listOwn()).map((sale) => [String(sale.id), sale.status]));
  const notSoldOut = saleIds.filter((id) => listed.get(String(id)) !== 'sold_out');
  run.check(
    `idle: all ${IDLE_SALES} sales live and sold out`,
    notSoldOut.length === 0,
    `${notSoldOut.length} not sold_out, e.g. ${notSoldOut.slice(0, 3).map((id) => `${id} ${listed.get(String(id))}`)}`,
  );
}

/**
 * Idle means no recent activity: reconciliation still visits a sale for RECONCILE_ACTIVE_WINDOW_MS
 * after its last change (here, its sell-out), so the measurement starts once that window and one more
 * reconciliation run have passed — the steady state of many open, sold-out sales.
 */
function activityWindowMs(appEnv) {
  const { lifecycle } = require('@flash-sale/config').loadConfig(appEnv);
  // A build without activity windows reconciles every sale every interval: nothing to wait out.
  return (lifecycle.reconcileActiveWindowMs ?? 0) + lifecycle.reconcileIntervalMs || 2_000;
}

/** `fn` over `items`, at most `concurrency` at a time; the results in the items' order. */
async function mapConcurrently(items, concurrency, fn) {
  const results = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return results;
}
