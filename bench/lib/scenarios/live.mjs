/**
 * (b) The purchase endpoint: a live sale (every answer 202, the worker writing the orders meanwhile)
 * and a sold-out one (every answer 410), then both audited.
 */
import { waitForOrdersWritten } from '../orders.mjs';
import { startProfile, stopProfile } from '../profiler.mjs';
import { SETTINGS, log } from '../settings.mjs';
import { ensureFullSpeed } from '../process-probes.mjs';
import { restartApi, state } from '../stack.mjs';

/** Both sales, created before any load: the live one with more stock than any run can sell. */
export async function createEndpointSales(run) {
  return {
    live: await run.sales.create('bench live', SETTINGS.liveStock),
    soldOut: await run.sales.create('bench sold out', 1),
  };
}

/**
 * A warm-up with its own users (JIT, connection pools, Lua script cache), not recorded, whose orders
 * are written before the live run starts: the live run then pays for its own orders only.
 */
export async function runLiveSale(run, saleId) {
  // The API's scenarios are judged against the ceiling's: neither may run at part speed.
  await ensureFullSpeed(run, 'api', state.api, () => restartApi(run.appEnv, run.baseUrl));
  log(`warm-up ${SETTINGS.warmupS}s on sale ${saleId}`);
  const warmup = await run.load({
    key: 'warmup',
    label: 'warm-up',
    saleId,
    pairs: await run.buyers.preparePairs(saleId, Math.min(SETTINGS.users, 60_000)),
    expect: 202,
    durationS: SETTINGS.warmupS,
    settle: (statuses) => waitForOrdersWritten(saleId, statuses[202] ?? 0),
  });
  run.results.warmup = { requests: warmup.requests, reqPerSec: warmup.reqPerSec, errors: warmup.errors };
  const warmupAccepted = warmup.statusCounts[202] ?? 0;

  const live = await profiledTimedRun(run, 'the live sale', ['api-live', 'API CPU profile, live scenario'], {
    key: 'live',
    label: 'live sale (202)',
    saleId,
    expect: 202,
    settle: (statuses) => waitForOrdersWritten(saleId, warmupAccepted + (statuses[202] ?? 0)),
  });
  run.answeredAsExpected('live sale: every answer 202', live);
}

/**
 * Its single unit goes first, then the same load as the live sale must be refused with 410; then the
 * flood again with BENCH_FLOOD_CONNECTIONS connections (the crowd that keeps clicking after a sell-out).
 * Both floods' buyers are prepared first, so the second follows the first at once, as a real crowd does
 * (preparing them takes seconds, in which an API with no traffic would let its sold-out flag lapse).
 */
export async function runSoldOutSale(run, saleId) {
  const firstBuyer = await run.buyers.preparePairs(saleId, 1);
  await run.http.raw('POST', `/api/sales/${saleId}/purchase`, firstBuyer.body[0], firstBuyer.auth[0], 202);
  await waitForOrdersWritten(saleId, 1); // its writing must not land in the sold-out run's costs
  const floodName = `the sold-out sale, ${SETTINGS.floodConnections} connections`;
  log(`preparing ${SETTINGS.users} pairs for ${floodName}`);
  const floodPairs = await run.buyers.preparePairs(saleId, SETTINGS.users);
  const profile = ['api-sold-out', 'API CPU profile, sold-out scenario'];
  const soldOut = await profiledTimedRun(run, 'the sold-out sale', profile, {
    key: 'soldOut',
    label: 'sold-out sale (410)',
    saleId,
    expect: 410,
  });
  run.answeredAsExpected('sold-out sale: every answer 410', soldOut);
  const floodProfile = [
    'api-sold-out-flood',
    `API CPU profile, sold-out scenario, ${SETTINGS.floodConnections} connections`,
  ];
  const flood = await profiledTimedRun(run, floodName, floodProfile, {
    key: 'soldOutFlood',
    label: `sold-out sale (410), ${SETTINGS.floodConnections} connections`,
    saleId,
    expect: 410,
    connections: SETTINGS.floodConnections,
    pairs: floodPairs,
  });
  run.answeredAsExpected(`sold-out sale, ${SETTINGS.floodConnections} connections: every answer 410`, flood);
}

/**
 * A timed run on the API with BENCH_USERS fresh buyers (`options.pairs`, or prepared here), recorded, with the API CPU-profiled during it
 * when BENCH_CPU_PROF=1.
 */
async function profiledTimedRun(run, saleName, [profileName, profileTitle], options) {
  let pairs = options.pairs;
  if (!pairs) {
    log(`preparing ${SETTINGS.users} pairs for ${saleName}`);
    pairs = await run.buyers.preparePairs(options.saleId, SETTINGS.users);
  }
  await startProfile(state.api);
  const measured = await run.load({ ...options, pairs, durationS: SETTINGS.durationS });
  run.results.profiles ??= [];
  await stopProfile(state.api, 'api', run.results.profiles, profileName, profileTitle);
  run.results.scenarios.push(measured);
  return measured;
}

/** Every order of both sales is written (the live run settled on it): audited while things are quiet. */
export async function auditEndpointSales(run, sales) {
  run.results.audits = {};
  for (const [name, sale] of Object.entries(sales)) {
    const audit = await run.sales.audit(sale.id);
    run.results.audits[name] = audit;
    run.check(`audit ${name} sale ok`, audit.ok === true, JSON.stringify(audit));
  }
}

/** Buyers of the returning-buyers sale: each buys its one unit, then comes back RETURNS times. */
const RETURNING_BUYERS = 2_000;
/** Within the per-user purchase limit of the load-test profile (10 per 10 s): refusals, not 429s. */
const RETURNS = 9;

/**
 * Buyers who bought come back after the sell-out, each time with a new submit token (the crowd that keeps
 * clicking "buy" after a purchase): the sold-out flag may not answer them (a token of theirs could be a
 * replay), so Redis does — `409 LIMIT_REACHED` — and that answer must cost no MySQL query. A fixed count of
 * requests (RETURNING_BUYERS × RETURNS), so no buyer goes over their rate limit.
 */
export async function runReturningBuyers(run) {
  const sale = await run.sales.create('bench returning buyers', RETURNING_BUYERS);
  const firstPairs = await run.buyers.preparePairs(sale.id, RETURNING_BUYERS);
  log(`returning buyers: ${RETURNING_BUYERS} buyers buy the sale's ${RETURNING_BUYERS} units`);
  await run.load({
    key: 'returningFirst',
    label: 'returning buyers, first purchase',
    saleId: sale.id,
    pairs: firstPairs,
    expect: 202,
    amount: RETURNING_BUYERS,
    settle: () => waitForOrdersWritten(sale.id, RETURNING_BUYERS),
  });
  const returning = await profiledTimedRun(
    run,
    'returning buyers',
    ['api-returning', 'API CPU profile, buyers who bought come back'],
    {
      key: 'returningBuyers',
      label: `sold-out sale, its ${RETURNING_BUYERS} buyers back ${RETURNS}× (409)`,
      saleId: sale.id,
      expect: [409, 410],
      amount: RETURNING_BUYERS * RETURNS,
      pairs: await run.buyers.preparePairs(sale.id, RETURNING_BUYERS * RETURNS, { userIds: firstPairs.user }),
    },
  );
  run.answeredAsExpected('sold-out sale, its buyers back: every answer 409 or 410', returning);
}
