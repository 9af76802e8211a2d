// Strategy comparison: the same spike of buyers against one sale per strategy, the strategies one after
// another — each gets the stack to itself, so each latency is its own (docs/architecture.md, "Strategies").
//
//   setup     creates one load-test sale per strategy: same stock, all open at once
//   scenarios one per strategy, named after it and tagged `strategy:<name>`, each starting when the one
//             before has finished: a spike of PEAK_RATE buyers/s (sign in, token, buy once)
//   teardown  waits for each sale's queue to drain and audits it
//
// Correctness: every strategy answers only what the contract promises; every strategy except those in
// EXPECTED_TO_OVERSELL ends with 0 oversold and a clean audit. Those exist to oversell: their oversold
// units are the finding, reported as UNSAFE, never a failed threshold. Latency: each strategy's p95
// under P95_MS.
//
//   k6 run load-tests/strategy-comparison.ts -e BASE_URL=http://localhost:3000
//   k6 run load-tests/strategy-comparison.ts -e STRATEGIES=redis-lua,db-pessimistic   (a subset)
import exec from 'k6/execution';
import type { Options, Scenario, Threshold } from 'k6/options';
import { Api } from './lib/api.ts';
import type { AuditExpectations } from './lib/audit.ts';
import { SALE_LIMITS, SALE_STRATEGIES, type SaleStrategy, UNSAFE_STRATEGIES } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt, envSpike, envStrategies, isStrategy } from './lib/config.ts';
import { buy, prepareBuyer } from './lib/flows.ts';
import { SETUP_THRESHOLD } from './lib/metrics.ts';
import { auditSales, type RunData, setupRun } from './lib/run.ts';
import { buyerLatencyBounds, latencyThresholds, opensIn, reportThresholds, runOptions } from './lib/scenario.ts';
import { DEFAULT_SHAPES, DEFAULT_STOCK, plannedArrivals, shapeSeconds, spikeScenario } from './lib/shapes.ts';
import { count, fmt, fmtMs, stat, summaryHandler, table } from './lib/summary.ts';
import { declareTimeline, startTimelineAt } from './lib/timeline.ts';

/** Compared by default, in this order: every strategy of the contract (add new ones there). */
const COMPARED: readonly SaleStrategy[] = SALE_STRATEGIES;
/** Strategies that exist to show an oversell: reported UNSAFE, never a failed threshold. */
const EXPECTED_TO_OVERSELL: readonly string[] = UNSAFE_STRATEGIES;

const config = commonConfig();
const SELECTED = envStrategies('STRATEGIES', COMPARED);
const SHAPE = envSpike(DEFAULT_SHAPES.comparison);
/** Units of each sale. */
const STOCK = envInt('STOCK', DEFAULT_STOCK.comparison, 1, SALE_LIMITS.maxStock);
/** Seconds between one strategy's last arrival and the next strategy's first: in-flight buyers finish. */
const GAP = envInt('GAP', 10, 0, 600);
const SLOT_SECONDS = shapeSeconds(SHAPE) + GAP;
const BUCKET_SECONDS = declareTimeline(SELECTED.length * SLOT_SECONDS + 30);

const unsafe = (strategy: string): boolean => EXPECTED_TO_OVERSELL.includes(strategy);

/** Each strategy's own bounds: its scenario is named after it, and its samples are tagged with it. */
const LATENCY = SELECTED.flatMap((s) => buyerLatencyBounds(config, s, s));

function scenarios(): Record<string, Scenario> {
  const all: Record<string, Scenario> = {};
  SELECTED.forEach((strategy, i) => {
    all[strategy] = spikeScenario(SHAPE, 0.5, {
      startTime: `${i * SLOT_SECONDS}s`,
      gracefulStop: `${Math.max(1, GAP)}s`,
      tags: { strategy },
    });
  });
  return all;
}

function thresholds(): Record<string, Threshold[]> {
  const all: Record<string, Threshold[]> = { ...SETUP_THRESHOLD };
  for (const s of SELECTED) {
    const safe = !unsafe(s);
    // Every strategy keeps the contract.
    all[`purchase_unexpected{strategy:${s}}`] = ['count==0'];
    all[`request_unexpected{strategy:${s}}`] = ['count==0'];
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
  return { ...all, ...latencyThresholds(config, LATENCY), ...reportThresholds() };
}

export const options: Options = {
  scenarios: scenarios(),
  ...runOptions(config, SELECTED.length),
  thresholds: thresholds(),
};

interface SetupData extends RunData {
  /** Sale id per strategy. */
  sales: Partial<Record<SaleStrategy, string>>;
}

const api = new Api(config.baseUrl, config.httpTimeout);

export function setup(): SetupData {
  return setupRun(config, (admin, id) => {
    const sales: Partial<Record<SaleStrategy, string>> = {};
    for (const strategy of SELECTED) {
      const created = admin.api.createSale(admin.token, {
        name: `k6 comparison ${id} ${strategy}`,
        description: `k6 strategy-comparison: up to ${SHAPE.peakRate} buyers/s, ${STOCK} units, strategy ${strategy}`,
        priceCents: 2999,
        stock: STOCK,
        perUserLimit: 1,
        ...opensIn(0),
        strategy,
        purpose: 'load-test',
      });
      if (!created.ok) {
        throw new Error(
          `Creating the ${strategy} sale failed: HTTP ${created.status} ${created.code}: ${created.message}. ` +
            `If this API does not implement that strategy, choose the ones it has, e.g. -e STRATEGIES=redis-lua`,
        );
      }
      sales[strategy] = created.value.id;
      console.log(`${strategy}: sale ${created.value.id}, stock ${STOCK}`);
    }
    return { sales };
  });
}

export default function (data: SetupData): void {
  startTimelineAt(data.loadStartMs);
  const strategy = exec.scenario.name;
  const saleId = isStrategy(strategy) ? data.sales[strategy] : undefined;
  if (!isStrategy(strategy) || saleId === undefined) {
    throw new Error(`scenario ${strategy} has no sale`);
  }
  const buyer = prepareBuyer(api, saleId, `k6-cmp-${data.runId}-${strategy}-${exec.scenario.iterationInTest}`);
  if (!buyer) return;
  buy(api, buyer, saleId, strategy);
}

export function teardown(data: SetupData): void {
  const audited: Array<[string, AuditExpectations]> = [];
  for (const strategy of SELECTED) {
    const saleId = data.sales[strategy];
    if (saleId === undefined) continue;
    const safe = !unsafe(strategy);
    audited.push([
      saleId,
      { label: safe ? strategy : `${strategy} (UNSAFE by design)`, tags: { strategy }, enforce: safe },
    ]);
  }
  auditSales(config, audited);
}

function verdict(data: K6SummaryData, strategy: SaleStrategy): string {
  const oversold = stat(data, `oversold_units{strategy:${strategy}}`, 'value');
  if (unsafe(strategy)) {
    if (oversold === undefined) return 'UNSAFE (not audited)';
    return oversold > 0
      ? `UNSAFE: oversold ${oversold} unit(s), as expected`
      : 'UNSAFE by design (the race was not hit this run: raise PEAK_RATE)';
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
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load:
    `per strategy, one after another (${SLOT_SECONDS} s each): a spike of ${SHAPE.peakRate} buyers/s ` +
    `(about ${plannedArrivals(SHAPE)} buyers) on a sale of ${STOCK} units`,
  details: (data) => [
    ...table([
      ['strategy', 'accepted', 'sold out', 'limit', 'unexpected', 'p50', 'p95', 'max', 'held', 'oversold', 'verdict'],
      ...SELECTED.map((s) => {
        const duration = `purchase_duration{strategy:${s}}`;
        return [
          unsafe(s) ? `${s} (UNSAFE)` : s,
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
    ...(SELECTED.some(unsafe)
      ? ['UNSAFE strategies read, check and write with no guard: their oversold units are the finding, not a failure.']
      : []),
  ],
});
