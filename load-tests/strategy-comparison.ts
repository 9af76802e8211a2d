// Strategy comparison: the same load against every strategy, the strategies one after another — each gets
// the stack to itself, so each latency is its own (docs/architecture.md, "Strategies"). Each strategy
// meets two shapes, each on a sale of its own:
//
//   spike     PEAK_RATE buyers/s ramping up, holding and fading (sign in, token, buy once): latency under
//             a realistic arrival curve, judged by its p95
//   instant   INSTANT_BUYERS buyers, one VU each, who sign in and take a token, then all buy in the same
//             millisecond (as stampede.ts): the race an unguarded read-check-write loses, judged by how
//             soon the last buyer was answered; LATE_BUYERS more arrive LATE_AFTER s later, as buyers who
//             reload. In the lock strategies' instant a lock holder pauses past the lock's TTL
//             (PAUSE_LOCK_HOLDER, on by default; POST /api/admin/sales/:id/pause-lock-holder): redis-lock's
//             fence refuses its late write; redis-lock-unfenced writes its stale count over the units sold
//             meanwhile, and the late buyers buy them again — its oversell
//
//   setup     creates both sales of every strategy, open at once
//   teardown  waits for each sale's queue to drain and audits it
//
// Correctness: every strategy answers only what the contract promises; every strategy except those in
// EXPECTED_TO_OVERSELL ends with 0 oversold and clean audits. Those exist to oversell: their oversold
// units are the finding, reported as UNSAFE, never a failed threshold. Latency, per strategy: spike p95
// under P95_MS, the instant's last buyer answered within ANSWERED_WITHIN s, nobody giving up — gating for
// the default strategy (redis-lua), each other strategy's expectation, reported beside it.
//
//   k6 run load-tests/strategy-comparison.ts -e BASE_URL=http://localhost:3000
//   k6 run load-tests/strategy-comparison.ts -e STRATEGIES=redis-lua,db-pessimistic   (a subset)
import exec from 'k6/execution';
import type { Options, Scenario, Threshold } from 'k6/options';
import { Api } from './lib/api.ts';
import { type AuditExpectations, signInAdmin } from './lib/audit.ts';
import {
  LOCK_STRATEGIES,
  SALE_DEFAULTS,
  SALE_LIMITS,
  SALE_STRATEGIES,
  type SaleStrategy,
  UNSAFE_STRATEGIES,
} from '../libs/contract/src/sale.ts';
import {
  type ComparisonSpec,
  comparisonLoad,
  CROWD_ANSWERED,
  instantScenario,
  ofStrategy,
  PHASES,
  type Phase,
  strategyLatencyBounds,
} from './lib/comparison.ts';
import { commonConfig, envInt, envSpike, envStrategies, envSwitch } from './lib/config.ts';
import { buy, buyAtTheInstant, prepareBuyer, RETRY_LATER_SECONDS } from './lib/flows.ts';
import { recordUnexpected, SETUP_THRESHOLD } from './lib/metrics.ts';
import { auditSales, type RunData, setupRun } from './lib/run.ts';
import { burstScenario, latencyThresholds, opensIn, reportThresholds, runOptions } from './lib/scenario.ts';
import {
  DEFAULT_COMPARISON_INSTANT,
  DEFAULT_SHAPES,
  DEFAULT_STOCK,
  plannedArrivals,
  shapeSeconds,
  spikeScenario,
} from './lib/shapes.ts';
import { summaryHandler } from './lib/summary.ts';
import { declareTimeline, startTimelineAt } from './lib/timeline.ts';

/** Compared by default, in this order: every strategy of the contract (add new ones there). */
const COMPARED: readonly SaleStrategy[] = SALE_STRATEGIES;
/** Strategies that exist to show an oversell: reported UNSAFE, never a failed threshold. */
const EXPECTED_TO_OVERSELL: readonly string[] = UNSAFE_STRATEGIES;

const config = commonConfig();
const SELECTED = envStrategies('STRATEGIES', COMPARED);
const SHAPE = envSpike(DEFAULT_SHAPES.comparison);
/** Units of each strategy's spike sale and of its instant sale. */
const STOCK: Record<Phase, number> = {
  spike: envInt('STOCK', DEFAULT_STOCK.comparison, 1, SALE_LIMITS.maxStock),
  instant: envInt('INSTANT_STOCK', DEFAULT_COMPARISON_INSTANT.stock, 1, SALE_LIMITS.maxStock),
};
const INSTANT_BUYERS = envInt('INSTANT_BUYERS', DEFAULT_COMPARISON_INSTANT.buyers, 1, 5000);
const LATE_BUYERS = envInt('LATE_BUYERS', DEFAULT_COMPARISON_INSTANT.lateBuyers, 0, 5000);
/** Seconds from the instant to the late buyers' arrival. */
const LATE_AFTER = envInt('LATE_AFTER', DEFAULT_COMPARISON_INSTANT.lateAfterS, 1, 60);
/** Seconds the instant's buyers have to sign in and take a token before they all buy. */
const INSTANT_PREP = envInt('INSTANT_PREP', DEFAULT_COMPARISON_INSTANT.prepS, 1, 100);
const ANSWERED_WITHIN = envInt('ANSWERED_WITHIN', DEFAULT_COMPARISON_INSTANT.answeredWithinS, 1, 600);
/** The lock strategies' instant has a lock holder paused past the lock's TTL (the demonstration's fault). */
const PAUSE_LOCK_HOLDER = envSwitch('PAUSE_LOCK_HOLDER', true);
/** Seconds from a spike's last arrival to its instant's buyers starting to prepare: in-flight buyers finish. */
const SETTLE = 2;
/** Seconds from one strategy's late buyers to the next strategy's first arrival. */
const GAP = envInt('GAP', 4, 0, 600);
const SPIKE_SECONDS = shapeSeconds(SHAPE);
const SLOT_SECONDS = SPIKE_SECONDS + SETTLE + INSTANT_PREP + LATE_AFTER + GAP;
const BUCKET_SECONDS = declareTimeline(SELECTED.length * SLOT_SECONDS + RETRY_LATER_SECONDS + 30);

const unsafe = (strategy: string): boolean => EXPECTED_TO_OVERSELL.includes(strategy);
const pausesHolder = (strategy: SaleStrategy): boolean => PAUSE_LOCK_HOLDER && LOCK_STRATEGIES.includes(strategy);

/** Seconds from the load's start to a strategy's first arrival, and to its instant. */
const startOf = (index: number): number => index * SLOT_SECONDS;
const instantOf = (index: number): number => startOf(index) + SPIKE_SECONDS + SETTLE + INSTANT_PREP;

/**
 * Latency gates for the default strategy alone (the one a sale gets unless told otherwise); every other
 * strategy's bounds are its expectation, reported beside its values: that db-pessimistic or redis-lock
 * are slower under a spike is what the comparison exists to show, not a failure of the run.
 */
const GATED_STRATEGY: SaleStrategy = SALE_DEFAULTS.strategy;
const LATENCY = SELECTED.flatMap((s) =>
  strategyLatencyBounds(s, { p95Ms: config.p95Ms, answeredWithinMs: ANSWERED_WITHIN * 1000 }, s === GATED_STRATEGY),
);

const COMPARISON: ComparisonSpec = {
  strategies: SELECTED,
  unsafe: SELECTED.filter(unsafe),
  stock: STOCK,
  pausedLockHolder: SELECTED.filter(pausesHolder),
  latencyBounds: LATENCY,
  startsAt: SELECTED.map((_, i) => startOf(i)),
};

/** What each scenario is: its strategy and phase (the VU reads it by the scenario's name). */
const PLAN: Record<string, { strategy: SaleStrategy; phase: Phase; index: number }> = {};
SELECTED.forEach((strategy, index) => {
  PLAN[strategy] = { strategy, phase: 'spike', index };
  PLAN[instantScenario(strategy)] = { strategy, phase: 'instant', index };
});

function scenarios(): Record<string, Scenario> {
  const all: Record<string, Scenario> = {};
  SELECTED.forEach((strategy, i) => {
    all[strategy] = spikeScenario(SHAPE, 0.5, {
      startTime: `${startOf(i)}s`,
      // In-flight buyers (a few sending their token again after "retry later") finish before the next spike.
      gracefulStop: `${SLOT_SECONDS - SPIKE_SECONDS}s`,
      tags: { strategy, phase: 'spike' },
    });
    all[instantScenario(strategy)] = burstScenario(INSTANT_BUYERS + LATE_BUYERS, INSTANT_PREP, {
      startTime: `${startOf(i) + SPIKE_SECONDS + SETTLE}s`,
      // Past every buyer's last resend (RETRY_LATER_SECONDS), and before the next strategy's instant: a
      // buyer still unanswered then has long failed its bound; its VU is not needed twice at once.
      maxDuration: `${INSTANT_PREP + LATE_AFTER + RETRY_LATER_SECONDS + 5}s`,
      gracefulStop: '0s',
      tags: { strategy, phase: 'instant' },
    });
  });
  return all;
}

function thresholds(): Record<string, Threshold[]> {
  const all: Record<string, Threshold[]> = { ...SETUP_THRESHOLD };
  for (const s of SELECTED) {
    const safe = !unsafe(s);
    // Every strategy keeps the contract.
    all[ofStrategy('purchase_unexpected', s)] = ['count==0'];
    all[ofStrategy('request_unexpected', s)] = ['count==0'];
    all[ofStrategy('checks', s)] = ['rate==1'];
    // Safety: only for the strategies that claim it. The `>=0` ones never fail: they only make k6 keep
    // the sub-metric, so the report can show it.
    all[ofStrategy('audit_violations', s)] = [safe ? 'count==0' : 'count>=0'];
    for (const phase of PHASES) {
      all[ofStrategy('purchase_accepted', s, phase)] = [safe ? `count<=${STOCK[phase]}` : 'count>=0'];
      all[ofStrategy('oversold_units', s, phase)] = [safe ? 'value==0' : 'value>=0'];
      all[ofStrategy('held_units', s, phase)] = ['value>=0'];
      all[ofStrategy('audit_ok', s, phase)] = ['value>=0'];
    }
    for (const kept of ['purchase_accepted', 'purchase_sold_out', 'purchase_limit_reached', 'purchase_retried_later']) {
      all[ofStrategy(kept, s)] = ['count>=0'];
    }
    all[ofStrategy('purchase_duration', s, 'spike')] = ['max>=0'];
    all[CROWD_ANSWERED(s)] = ['max>=0'];
  }
  return { ...all, ...latencyThresholds(config, LATENCY), ...reportThresholds() };
}

export const options: Options = {
  scenarios: scenarios(),
  ...runOptions(config, SELECTED.length * PHASES.length),
  thresholds: thresholds(),
};

interface SetupData extends RunData {
  /** Sale ids per strategy and phase. */
  sales: Partial<Record<SaleStrategy, Record<Phase, string>>>;
}

const api = new Api(config.baseUrl, config.httpTimeout);

export function setup(): SetupData {
  return setupRun(config, (admin, id) => {
    const sales: Partial<Record<SaleStrategy, Record<Phase, string>>> = {};
    for (const strategy of SELECTED) {
      const ids: Partial<Record<Phase, string>> = {};
      for (const phase of PHASES) {
        const created = admin.api.createSale(admin.token, {
          name: `k6 comparison ${id} ${strategy} ${phase}`,
          description:
            phase === 'spike'
              ? `k6 strategy-comparison: up to ${SHAPE.peakRate} buyers/s, ${STOCK.spike} units, strategy ${strategy}`
              : `k6 strategy-comparison: ${INSTANT_BUYERS} buyers at once, ${STOCK.instant} units, strategy ${strategy}`,
          priceCents: 2999,
          stock: STOCK[phase],
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
        ids[phase] = created.value.id;
      }
      sales[strategy] = { spike: ids.spike ?? '', instant: ids.instant ?? '' };
      console.log(
        `${strategy}: spike sale ${ids.spike} (stock ${STOCK.spike}), instant sale ${ids.instant} ` +
          `(stock ${STOCK.instant}${pausesHolder(strategy) ? ', a lock holder paused past its TTL' : ''})`,
      );
    }
    return { sales };
  });
}

/**
 * The instant's first buyer arms the paused lock holder of its sale, seconds before the instant. It signs
 * the admin in itself: an admin token in the setup data would end up in the run's .json report.
 */
function armPausedLockHolder(saleId: string): void {
  const admin = signInAdmin(config);
  const armed = api.pauseLockHolder(admin.token, saleId);
  if (!armed.ok) recordUnexpected('pause_lock_holder', armed);
}

export default function (data: SetupData): void {
  startTimelineAt(data.loadStartMs);
  const plan = PLAN[exec.scenario.name];
  const saleId = plan ? data.sales[plan.strategy]?.[plan.phase] : undefined;
  if (!plan || saleId === undefined) throw new Error(`scenario ${exec.scenario.name} has no sale`);
  const name = `k6-cmp-${data.runId}-${plan.strategy}-${plan.phase}-${exec.scenario.iterationInTest}`;
  if (plan.phase === 'spike') {
    const buyer = prepareBuyer(api, saleId, name);
    if (buyer) buy(api, buyer, saleId, plan.strategy);
    return;
  }
  const buyer = exec.scenario.iterationInTest;
  if (pausesHolder(plan.strategy) && buyer === 0) armPausedLockHolder(saleId);
  const wave = buyer < INSTANT_BUYERS ? 'crowd' : 'late';
  const arrival = instantOf(plan.index) + (wave === 'crowd' ? 0 : LATE_AFTER);
  buyAtTheInstant(api, saleId, name, data.loadStartMs + arrival * 1000, plan.strategy, { wave });
}

export function teardown(data: SetupData): void {
  const audited: Array<[string, AuditExpectations]> = [];
  for (const strategy of SELECTED) {
    const safe = !unsafe(strategy);
    for (const phase of PHASES) {
      const saleId = data.sales[strategy]?.[phase];
      if (saleId === undefined) continue;
      audited.push([
        saleId,
        {
          label: `${safe ? strategy : `${strategy} (UNSAFE by design)`} ${phase}`,
          tags: { strategy, phase },
          enforce: safe,
        },
      ]);
    }
  }
  auditSales(config, audited);
}

export const handleSummary = summaryHandler({
  name: 'strategy-comparison',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load: comparisonLoad(
    COMPARISON,
    `a spike of ${SHAPE.peakRate} buyers/s (about ${plannedArrivals(SHAPE)} buyers in ${SPIKE_SECONDS} s)`,
    `${INSTANT_BUYERS} buyers in the same instant` +
      (LATE_BUYERS > 0 ? ` and ${LATE_BUYERS} more ${LATE_AFTER} s later` : ''),
  ),
  comparison: COMPARISON,
});
