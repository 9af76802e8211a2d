// Strategy comparison: the same burst against one sale per strategy at once (docs/architecture.md "Strategies"):
// `redis-lua`, `db-optimistic`, `db-segmented`, `db-pessimistic`, `redis-lock`, `redis-lock-unfenced`
// and `naive-unsafe`.
//
//   setup     creates one sale per strategy: same stock, same opening instant
//   scenarios one per strategy, named after it and tagged `strategy:<name>`, all at the same time:
//             USERS buyers each (sign in, token, wait for the opening, buy once)
//   teardown  waits for each sale's queue to drain and audits it
//
// Every strategy must answer only what docs/api.md promises and keep p(95) under P95_MS. Every strategy
// except naive-unsafe must end with oversold == 0 and a clean audit. naive-unsafe exists to oversell:
// its oversold units (gauge `oversold_units{strategy:naive-unsafe}`) are the finding, reported and
// labelled UNSAFE, never a failed threshold.
//
//   k6 run load-tests/strategy-comparison.ts -e BASE_URL=http://localhost:3000 -e USERS=500 -e STOCK=100
//   k6 run load-tests/strategy-comparison.ts -e STRATEGIES=redis-lua,db-pessimistic   (a subset)
import exec from 'k6/execution';
import type { Options, Scenario, Threshold } from 'k6/options';
import { Api } from './lib/api.ts';
import { auditChecks, signInAdmin, waitForQuiet } from './lib/audit.ts';
import { SALE_LIMITS, SALE_STRATEGIES, type SaleStrategy } from '../libs/contract/src/sale.ts';
import { UNSAFE_STRATEGY, commonConfig, envInt, envStrategies, isStrategy, runId } from './lib/config.ts';
import { buy, prepareBuyer, sleepUntil } from './lib/flows.ts';
import { completeSetup, SETUP_THRESHOLD } from './lib/metrics.ts';
import { burstScenario, opensIn, runOptions } from './lib/scenario.ts';
import { count, fmt, fmtMs, stat, summaryHandler, table } from './lib/summary.ts';

const config = commonConfig();
const SELECTED = envStrategies('STRATEGIES', SALE_STRATEGIES);
/** Buyers per strategy. */
const USERS = envInt('USERS', 500);
/** Units of each sale. */
const STOCK = envInt('STOCK', 100, 1, SALE_LIMITS.maxStock);
const START_DELAY = envInt('START_DELAY', 15, 1, 100);
const EXPECTED_SOLD = Math.min(STOCK, USERS);

function scenarios(): Record<string, Scenario> {
  const all: Record<string, Scenario> = {};
  for (const strategy of SELECTED) {
    all[strategy] = burstScenario(USERS, START_DELAY, { maxDuration: `${START_DELAY + 180}s`, tags: { strategy } });
  }
  return all;
}

function thresholds(): Record<string, Threshold[]> {
  const all: Record<string, Threshold[]> = { ...SETUP_THRESHOLD };
  for (const s of SELECTED) {
    const safe = s !== UNSAFE_STRATEGY;
    // Every strategy keeps the contract and the latency bound.
    all[`purchase_unexpected{strategy:${s}}`] = ['count==0'];
    all[`request_unexpected{strategy:${s}}`] = ['count==0'];
    all[`http_req_duration{scenario:${s}}`] = [`p(95)<${config.p95Ms}`];
    all[`purchase_duration{strategy:${s}}`] = [`p(95)<${config.p95Ms}`];
    all[`checks{strategy:${s}}`] = ['rate==1'];
    // Safety: only for the strategies that claim it. The `>=0` ones never fail: they only make k6 keep
    // the per-strategy sub-metric, so the report can show it.
    all[`purchase_accepted{strategy:${s}}`] = [safe ? `count<=${STOCK}` : 'count>=0'];
    all[`oversold_units{strategy:${s}}`] = [safe ? 'value==0' : 'value>=0'];
    all[`audit_violations{strategy:${s}}`] = [safe ? 'count==0' : 'count>=0'];
    all[`purchase_sold_out{strategy:${s}}`] = ['count>=0'];
    all[`purchase_limit_reached{strategy:${s}}`] = ['count>=0'];
    all[`held_units{strategy:${s}}`] = ['value>=0'];
    all[`audit_ok{strategy:${s}}`] = ['value>=0'];
  }
  return all;
}

export const options: Options = {
  scenarios: scenarios(),
  ...runOptions(config, SELECTED.length),
  thresholds: thresholds(),
};

interface SetupData {
  /** Sale id per strategy. */
  sales: Partial<Record<SaleStrategy, string>>;
  startsAtMs: number;
  runId: string;
}

const api = new Api(config.baseUrl, config.httpTimeout);

export function setup(): SetupData {
  const admin = signInAdmin(config);
  const id = runId();
  // One opening instant for every strategy's sale.
  const opening = opensIn(START_DELAY);
  const startsAt = new Date(opening.startsAt);
  const sales: Partial<Record<SaleStrategy, string>> = {};
  for (const strategy of SELECTED) {
    const created = admin.api.createSale(admin.token, {
      name: `k6 comparison ${id} ${strategy}`,
      description: `k6 strategy-comparison: ${USERS} buyers, ${STOCK} units, strategy ${strategy}`,
      priceCents: 2999,
      stock: STOCK,
      perUserLimit: 1,
      ...opening,
      strategy,
    });
    if (!created.ok) {
      throw new Error(
        `Creating the ${strategy} sale failed: HTTP ${created.status} ${created.code}: ${created.message}. ` +
          `If this API does not implement that strategy yet, choose the ones it has, e.g. -e STRATEGIES=redis-lua`,
      );
    }
    sales[strategy] = created.value.id;
    console.log(`${strategy}: sale ${created.value.id}, stock ${STOCK}, opens at ${created.value.startsAt}`);
  }
  return completeSetup({ sales, startsAtMs: startsAt.getTime(), runId: id });
}

export default function (data: SetupData): void {
  const strategy = exec.scenario.name;
  const saleId = isStrategy(strategy) ? data.sales[strategy] : undefined;
  if (!isStrategy(strategy) || saleId === undefined) {
    throw new Error(`scenario ${strategy} has no sale`);
  }
  const buyer = prepareBuyer(api, saleId, `k6-cmp-${data.runId}-${exec.vu.idInTest}`);
  if (!buyer) return;
  sleepUntil(data.startsAtMs);
  buy(api, buyer, saleId, strategy);
}

export function teardown(data: SetupData): void {
  const admin = signInAdmin(config);
  for (const strategy of SELECTED) {
    const saleId = data.sales[strategy];
    if (saleId === undefined) continue;
    const safe = strategy !== UNSAFE_STRATEGY;
    auditChecks(waitForQuiet(admin, saleId), {
      label: safe ? strategy : `${strategy} (UNSAFE by design)`,
      tags: { strategy },
      enforce: safe,
      held: safe ? EXPECTED_SOLD : undefined,
    });
  }
}

function verdict(data: K6SummaryData, strategy: SaleStrategy): string {
  const oversold = stat(data, `oversold_units{strategy:${strategy}}`, 'value');
  if (strategy === UNSAFE_STRATEGY) {
    if (oversold === undefined) return 'UNSAFE (not audited)';
    return oversold > 0
      ? `UNSAFE: oversold ${oversold} unit(s), as expected`
      : 'UNSAFE by design (the race was not hit this run: raise USERS)';
  }
  const ok = stat(data, `audit_ok{strategy:${strategy}}`, 'value') === 1;
  const unexpected = count(data, `purchase_unexpected{strategy:${strategy}}`);
  if (oversold === undefined) return 'NOT AUDITED';
  if (oversold > 0) return `OVERSOLD ${oversold} unit(s): BUG`;
  if (!ok) return 'audit NOT ok';
  return unexpected > 0 ? `safe, but ${unexpected} unexpected answer(s)` : 'safe';
}

export const handleSummary = summaryHandler({
  name: 'strategy-comparison',
  scenarios: SELECTED,
  config,
  details: (data) => [
    `${SELECTED.length} sale(s), stock ${STOCK} each, ${USERS} buyers each, all opening at the same instant`,
    ...table([
      ['strategy', 'accepted', 'sold out', 'limit', 'unexpected', 'p50', 'p95', 'max', 'held', 'oversold', 'verdict'],
      ...SELECTED.map((s) => {
        const duration = `purchase_duration{strategy:${s}}`;
        return [
          s === UNSAFE_STRATEGY ? `${s} (UNSAFE)` : s,
          String(count(data, `purchase_accepted{strategy:${s}}`)),
          String(count(data, `purchase_sold_out{strategy:${s}}`)),
          String(count(data, `purchase_limit_reached{strategy:${s}}`)),
          String(count(data, `purchase_unexpected{strategy:${s}}`)),
          fmtMs(stat(data, duration, 'med')),
          fmtMs(stat(data, duration, 'p(95)')),
          fmtMs(stat(data, duration, 'max')),
          fmt(stat(data, `held_units{strategy:${s}}`, 'value')),
          fmt(stat(data, `oversold_units{strategy:${s}}`, 'value')),
          verdict(data, s),
        ];
      }),
    ]).map((line) => `  ${line}`),
    `  (latency = the purchase request as the buyer saw it; held = PENDING_PAYMENT + PAID units per the audit)`,
    ...(SELECTED.includes(UNSAFE_STRATEGY)
      ? [
          `${UNSAFE_STRATEGY} reads, checks and writes with no guard: its oversold units are the finding, not a failure.`,
        ]
      : []),
  ],
});
