// Stampede: the worst instant a flash sale can have — USERS buyers, one VU each, all sending their
// purchase in the same millisecond for STOCK units. No p95 bound: queueing every buyer behind the others
// is the point. It gates on correctness and on throughput: every buyer answered within ANSWERED_WITHIN s
// of the opening (USERS / ANSWERED_WITHIN answers per second at least).
//
//   setup     admin signs in, creates one load-test sale opening START_DELAY s ahead
//   each VU   = one buyer: guest sign-in, submit token, sleep until the opening instant, buy once
//   teardown  waits for the order queue to drain, then audits the sale
//
// Correctness: only 202/201, 410 SOLD_OUT, 409 LIMIT_REACHED answers; exactly min(STOCK, USERS)
// accepted; the audit clean with held = min(STOCK, USERS).
//
//   k6 run load-tests/stampede.ts -e BASE_URL=http://localhost:3000 -e USERS=400 -e STOCK=100
import exec from 'k6/execution';
import type { Options } from 'k6/options';
import { Api } from './lib/api.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt, envStrategy } from './lib/config.ts';
import { buyAtTheInstant } from './lib/flows.ts';
import { type OneSaleRun, oneSaleRun } from './lib/run.ts';
import { auditLine, burstScenario, runOptions, scenarioThresholds } from './lib/scenario.ts';
import { DEFAULT_STAMPEDE, DEFAULT_STOCK } from './lib/shapes.ts';
import { count, fmt, summaryHandler } from './lib/summary.ts';
import { declareTimeline, startTimelineAt } from './lib/timeline.ts';
import type { LatencyBound } from './lib/verdict.ts';

const config = commonConfig();
const USERS = envInt('USERS', DEFAULT_STAMPEDE.users);
const STOCK = envInt('STOCK', DEFAULT_STOCK.stampede, 1, SALE_LIMITS.maxStock);
/** Seconds between setup and the opening: every buyer must have signed in and got a token by then. */
const START_DELAY = envInt('START_DELAY', 10, 1, 100);
const ANSWERED_WITHIN = envInt('ANSWERED_WITHIN', DEFAULT_STAMPEDE.answeredWithinS, 1, 600);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const EXPECTED_ACCEPTED = Math.min(STOCK, USERS);
const SCENARIO = 'stampede';
const BUCKET_SECONDS = declareTimeline(START_DELAY + ANSWERED_WITHIN + 30);

const LATENCY: LatencyBound[] = [
  { label: 'last buyer answered', metric: 'answered_after_opening', stat: 'max', below: ANSWERED_WITHIN * 1000 },
];

export const options: Options = {
  scenarios: { [SCENARIO]: burstScenario(USERS, START_DELAY, { tags: { strategy: STRATEGY } }) },
  ...runOptions(config),
  thresholds: scenarioThresholds(config, LATENCY, { purchase_accepted: [`count==${EXPECTED_ACCEPTED}`] }),
};

const api = new Api(config.baseUrl, config.httpTimeout);

export const { setup, teardown } = oneSaleRun(config, {
  scenario: 'stampede',
  about: `${USERS} buyers in one instant, ${STOCK} units`,
  opensInSeconds: START_DELAY,
  sale: { priceCents: 4999, stock: STOCK, perUserLimit: 1, strategy: STRATEGY },
  announce: (sale) => `sale ${sale.id} (${STRATEGY}, stock ${STOCK}) opens at ${sale.startsAt} for ${USERS} buyers`,
  held: EXPECTED_ACCEPTED,
});

export default function (data: OneSaleRun): void {
  startTimelineAt(data.loadStartMs);
  buyAtTheInstant(api, data.saleId, `k6-stampede-${data.runId}-${exec.vu.idInTest}`, data.startsAtMs, STRATEGY);
}

export const handleSummary = summaryHandler({
  name: 'stampede',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load: `${USERS} buyers in the same instant (one VU each) on one ${STRATEGY} sale of ${STOCK} units`,
  details: (data) => {
    const lastMs = data.metrics['answered_after_opening']?.values['max'];
    const answered = data.metrics['answered_after_opening']?.values['count'] ?? 0;
    const perSecond = lastMs && lastMs > 0 ? fmt((answered * 1000) / lastMs) : '—';
    return [
      `Expected accepted ${EXPECTED_ACCEPTED}, got ${count(data, 'purchase_accepted')}; ${answered} buyers answered within ` +
        `${fmt(lastMs === undefined ? undefined : lastMs / 1000)} s of the opening (${perSecond} answers/s)`,
      auditLine(data),
    ];
  },
});
