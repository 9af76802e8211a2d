// Waiting room: a sale created with `waitingRoom` (docs/api.md "The waiting room"). A crowd of
// EARLY_BUYERS joins in the START_DELAY s before the opening, LATE_RATE more a second keep joining for
// LATE_SECONDS after it; every buyer polls its ticket when `pollAfterMs` says, fetches a submit token
// with its pass once admitted, and buys. Every PROBE_EVERY-th buyer also asks for a token without a pass
// (once it has a place), with its pass tampered with, and has the next buyer present its pass: each must
// be refused `403 ADMISSION_REQUIRED`. A purchase needs a token and a token needs a pass, so no purchase
// gets past the room.
//
//   setup     admin signs in, creates one load-test sale opening START_DELAY s ahead, with its room
//   the VU    one VU drives the whole crowd (lib/room-flows.ts: each buyer a state machine, every due
//             request of a turn in one http.batch), samples the room once a second, then judges it
//   teardown  waits for the order queue to drain, then audits the sale
//
// Correctness: the audit clean (no oversell, no lost or duplicate order); no token without the buyer's
// own valid pass; every buyer waiting at the sell-out told sold_out within two of its poll intervals.
// Fairness: admissions in join order after the opening (0 provable inversions), the ETA of a buyer's
// first ticket with a place within ETA_ERROR_P90 % of its actual wait for 90 % of the buyers, purchase p95
// under P95_MS. (The same verdicts for 20,000 buyers: npm run room-crowd.)
//
//   k6 run load-tests/waiting-room.ts -e BASE_URL=http://localhost:3000
import type { Options } from 'k6/options';
import { Api } from './lib/api.ts';
import { expectedPurchase } from './lib/answer-shapes.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { WAITING_ROOM_LIMITS } from '../libs/contract/src/waiting-room.ts';
import { commonConfig, envInt, envNumber, envStrategy } from './lib/config.ts';
import { RETRY_LATER_SECONDS } from './lib/flows.ts';
import { recordRoomFigures, ROOM_SERIES, runCrowd, signInCrowd } from './lib/room-flows.ts';
import { arriveCrowd } from './lib/room-buyer.ts';
import { type OneSaleRun, oneSaleRun } from './lib/run.ts';
import { auditLine, p95Bound, runOptions, scenarioThresholds } from './lib/scenario.ts';
import { DEFAULT_ROOM } from './lib/shapes.ts';
import { signInAdmin } from './lib/audit.ts';
import { summaryHandler } from './lib/summary.ts';
import { declareSampledSeries, declareTimeline, startTimelineAt } from './lib/timeline.ts';
import type { LatencyBound } from './lib/verdict.ts';
import { ROOM_CORRECTNESS_THRESHOLDS, roomFairnessBounds, roomReport } from './lib/room-report.ts';
import { roomLines } from './lib/room-words.ts';
import { ETA_ERROR_P90_PERCENT, roomFigures, roomFiguresFromSummary } from './lib/waiting-room.ts';

const config = commonConfig();
const EARLY = envInt('EARLY_BUYERS', DEFAULT_ROOM.early, 0, 20_000);
const LATE_RATE = envNumber('LATE_RATE', DEFAULT_ROOM.lateRate, 0.1, 1000);
const LATE_SECONDS = envInt('LATE_SECONDS', DEFAULT_ROOM.lateSeconds, 0, 3600);
const LATE = Math.round(LATE_RATE * LATE_SECONDS);
const STOCK = envInt('STOCK', DEFAULT_ROOM.stock, 1, SALE_LIMITS.maxStock);
const ADMIT_PER_SECOND = envInt(
  'ADMIT_PER_SECOND',
  DEFAULT_ROOM.admitPerSecond,
  WAITING_ROOM_LIMITS.minAdmitPerSecond,
  WAITING_ROOM_LIMITS.maxAdmitPerSecond,
);
const MAX_SHOPPING = envInt('MAX_SHOPPING', DEFAULT_ROOM.maxShopping, 1, WAITING_ROOM_LIMITS.maxMaxShopping);
/** Seconds between setup and the opening: the crowd signs in, then joins in the meantime. */
const START_DELAY = envInt('START_DELAY', DEFAULT_ROOM.startDelayS, 5, 100);
const PROBE_EVERY = envInt('PROBE_EVERY', DEFAULT_ROOM.proberEvery, 1, 1_000_000);
/** Seconds after the last arrival that buyers may still be waiting before the run stops. */
const MAX_WAIT = envInt('MAX_WAIT', DEFAULT_ROOM.maxWaitS, 10, 3600);
/** Requests one turn of the crowd sends at once (k6's `batch` and `batchPerHost`). */
const PARALLEL = envInt('PARALLEL', 200, 1, 5000);
const ETA_ERROR_P90 = envNumber('ETA_ERROR_P90', ETA_ERROR_P90_PERCENT, 1, 10_000);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const SCENARIO = 'room';
const RUN_SECONDS = START_DELAY + LATE_SECONDS + MAX_WAIT;
const BUCKET_SECONDS = declareTimeline(RUN_SECONDS + 30);
declareSampledSeries(ROOM_SERIES);

const LATENCY: LatencyBound[] = [
  ...roomFairnessBounds({ etaErrorP90Percent: ETA_ERROR_P90, purchaseP95Ms: config.p95Ms }),
  // The room's requests (joins, polls, tokens, purchases), not the crowd's sign-ins before it.
  p95Bound(config, 'every room request p95', 'http_req_duration{phase:room}'),
];

export const options: Options = {
  scenarios: {
    [SCENARIO]: {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: 1,
      maxDuration: `${RUN_SECONDS + 60}s`,
      tags: { strategy: STRATEGY },
    },
  },
  batch: PARALLEL,
  batchPerHost: PARALLEL,
  ...runOptions(config),
  thresholds: scenarioThresholds(config, LATENCY, {
    purchase_accepted: [`count<=${STOCK}`],
    ...ROOM_CORRECTNESS_THRESHOLDS,
  }),
};

const api = new Api(config.baseUrl, config.httpTimeout);

export const { setup, teardown } = oneSaleRun(config, {
  scenario: 'waiting-room',
  about: `${EARLY} buyers before the opening, ${LATE} after, ${STOCK} units`,
  opensInSeconds: START_DELAY,
  sale: {
    priceCents: 4999,
    stock: STOCK,
    perUserLimit: 1,
    strategy: STRATEGY,
    waitingRoom: { admitPerSecond: ADMIT_PER_SECOND, maxShopping: MAX_SHOPPING },
  },
  announce: (sale) =>
    `sale ${sale.id} (${STRATEGY}, stock ${STOCK}, room ${ADMIT_PER_SECOND}/s under ${MAX_SHOPPING} shopping) ` +
    `opens at ${sale.startsAt}: ${EARLY} buyers join before, ${LATE} after`,
});

export default function (data: OneSaleRun): void {
  startTimelineAt(data.loadStartMs);
  const tags = { strategy: STRATEGY, phase: 'room' };
  const admin = signInAdmin(config);
  const sessions = signInCrowd(api, EARLY + LATE, (i) => `k6-room-${data.runId}-${i}`, PARALLEL, {
    ...tags,
    phase: 'sign_in',
  });
  const earlyUntil = data.startsAtMs - 2000;
  if (Date.now() > earlyUntil) {
    console.warn(`signing the crowd in took past the opening's eve: raise START_DELAY (${START_DELAY} s)`);
  }
  const buyers = arriveCrowd({
    from: Date.now(),
    early: Math.min(EARLY, sessions.length),
    earlyUntil,
    opensAt: data.startsAtMs,
    late: Math.max(0, sessions.length - EARLY),
    lateRate: LATE_RATE,
    proberEvery: PROBE_EVERY,
  });
  runCrowd({
    api,
    sessions,
    plan: {
      saleId: data.saleId,
      buyers: sessions.length,
      purchase: expectedPurchase(STRATEGY),
      retryLaterMs: RETRY_LATER_SECONDS * 1000,
    },
    buyers,
    parallel: PARALLEL,
    deadline: data.startsAtMs + (LATE_SECONDS + MAX_WAIT) * 1000,
    admin,
    tags,
  });
  const figures = roomFigures(buyers, STOCK, data.startsAtMs);
  recordRoomFigures(figures, buyers, { originMs: data.loadStartMs, bucketSeconds: BUCKET_SECONDS });
  console.log(roomLines(figures).join('\n'));
}

export const handleSummary = summaryHandler({
  name: 'waiting-room',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load:
    `${EARLY} buyers join before the opening, ${LATE_RATE}/s for ${LATE_SECONDS} s after it (${LATE}); one ` +
    `${STRATEGY} sale of ${STOCK} units, its room admitting ${ADMIT_PER_SECOND}/s under ${MAX_SHOPPING} shopping`,
  ...roomReport(START_DELAY),
  details: (data) => [...roomLines(roomFiguresFromSummary(data)), auditLine(data)],
});
