/**
 * (d) One sale per strategy — same stock, same number of distinct buyers, same concurrency — one after
 * another, each after a short warm-up on a throwaway sale of its strategy; each sale is then audited.
 */
import { require } from '../app-dist.mjs';
import { waitForOrdersWritten } from '../orders.mjs';
import { MUST_OVERSELL, SETTINGS, log } from '../settings.mjs';

export async function runStrategies(run) {
  // Every strategy of the contract, in its order; the unsafe ones are reported, not checked.
  const { SALE_STRATEGIES, UNSAFE_STRATEGIES } = require('@flash-sale/contract');
  run.results.strategies = [];
  for (const strategy of SALE_STRATEGIES) {
    const redisBacked = strategy === 'redis-lua';
    // redis-lua answers 202 and the worker writes the order; the others write it in the request (201).
    const accept = redisBacked ? 202 : 201;
    if (SETTINGS.strategyWarmup > 0) await warmUp(run, strategy, accept);
    const entry = await measureStrategy(run, strategy, accept, UNSAFE_STRATEGIES.includes(strategy));
    run.results.strategies.push(entry);
    log(
      `strategy ${strategy}: ${entry.accepted} accepted of ${entry.buyers} buyers on stock ${entry.stock}; ` +
        `audit oversold ${entry.audit.oversold}, held ${entry.audit.held}, ok ${entry.audit.ok}`,
    );
    if (!entry.unsafe) checkSafe(run, entry);
  }
}

/**
 * `count` distinct buyers at `saleId`, one request each. redis-lua's run lasts until the worker has
 * written its orders, which the audit counts.
 */
async function buyOnce(run, { key, label, strategy, accept, saleId, count }) {
  const redisBacked = strategy === 'redis-lua';
  return run.load({
    key,
    label,
    saleId,
    pairs: await run.buyers.preparePairs(saleId, count, { storeInRedis: redisBacked }),
    expect: [accept, 410],
    amount: count,
    settle: redisBacked ? (statuses) => waitForOrdersWritten(saleId, statuses[accept] ?? 0) : undefined,
  });
}

/** Its code path (and MySQL's for it) warmed on a throwaway sale with the same sold-out ratio. */
async function warmUp(run, strategy, accept) {
  const requests = Math.max(SETTINGS.strategyWarmup, SETTINGS.connections);
  const stock = Math.max(1, Math.round((requests * SETTINGS.strategyStock) / SETTINGS.strategyBuyers));
  const sale = await run.sales.create(`bench ${strategy} warm-up`, stock, strategy);
  const label = `${strategy} warm-up`;
  await buyOnce(run, { key: 'strategyWarmup', label, strategy, accept, saleId: sale.id, count: requests });
}

async function measureStrategy(run, strategy, accept, unsafe) {
  const sale = await run.sales.create(`bench ${strategy}`, SETTINGS.strategyStock, strategy);
  const measured = await buyOnce(run, {
    key: `strategy:${strategy}`,
    label: `strategy ${strategy}`,
    strategy,
    accept,
    saleId: sale.id,
    count: SETTINGS.strategyBuyers,
  });
  return {
    ...measured,
    strategy,
    unsafe,
    mustOversell: strategy === MUST_OVERSELL,
    saleId: sale.id,
    stock: SETTINGS.strategyStock,
    buyers: SETTINGS.strategyBuyers,
    acceptedStatus: accept,
    accepted: measured.statusCounts[accept] ?? 0,
    refusedSoldOut: measured.statusCounts[410] ?? 0,
    audit: await run.sales.audit(sale.id),
  };
}

/**
 * Safety is checked for every safe strategy (naive-unsafe is expected to oversell: a target, not a
 * check; redis-lock-unfenced's count is reported only). Other answers (e.g. db-optimistic's 503 when its retries run out under contention) are a
 * property of the strategy, reported in the table; only the app's own path, redis-lua, must answer
 * nothing but 202/410.
 */
function checkSafe(run, entry) {
  const { strategy, audit } = entry;
  if (strategy === 'redis-lua') {
    run.answeredAsExpected(`strategy ${strategy}: every answer ${entry.acceptedStatus} or 410`, entry);
    run.check(
      `strategy ${strategy}: sold exactly the stock`,
      entry.accepted === entry.stock && audit.held === entry.stock,
      `${entry.accepted} accepted, ${audit.held} held, stock ${entry.stock}`,
    );
  }
  run.check(`audit strategy ${strategy} ok`, audit.ok === true && audit.oversold === 0, JSON.stringify(audit));
}
