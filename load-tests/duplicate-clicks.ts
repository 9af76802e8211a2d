// Duplicate clicks: buyers arrive in a spike (PEAK_RATE per second, ramping up and down like
// flash-sale-burst), and every buyer double-clicks — the same submit token CLICKS times at once — and
// also fires EXTRA_TOKENS other tokens in the same instant, all in one `http.batch`.
//
// Per buyer it checks that the replays of one token all got the same answer (the same order number when
// it succeeded), and that the buyer holds at most PER_USER_LIMIT distinct orders; then the buyer reads
// each order back. Teardown audits the sale (no oversell, no duplicate, no lost reservation).
//
//   k6 run load-tests/duplicate-clicks.ts -e BASE_URL=http://localhost:3000
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import http, { type RefinedResponse } from 'k6/http';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { Api, classifyPurchase, type PurchaseOutcome, type Session } from './lib/api.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt, envSpike, envStrategy } from './lib/config.ts';
import { prepareBuyer, Resends } from './lib/flows.ts';
import {
  purchaseDuration,
  purchaseEarly,
  purchaseGaveUp,
  purchaseReplayed,
  purchaseRetriedLater,
  recordPurchase,
  recordUnexpected,
  warnSome,
} from './lib/metrics.ts';
import { type OneSaleRun, oneSaleRun } from './lib/run.ts';
import { auditLine, buyerLatencyBounds, runOptions, scenarioThresholds } from './lib/scenario.ts';
import { DEFAULT_SHAPES, DEFAULT_STOCK, plannedArrivals, shapeSeconds, spikeScenario } from './lib/shapes.ts';
import { count, summaryHandler } from './lib/summary.ts';
import { declareTimeline, recordTimeline, startTimelineAt } from './lib/timeline.ts';

const config = commonConfig();
const SHAPE = envSpike(DEFAULT_SHAPES.duplicateClicks);
const STOCK = envInt('STOCK', DEFAULT_STOCK.duplicateClicks, 1, SALE_LIMITS.maxStock);
const PER_USER_LIMIT = envInt('PER_USER_LIMIT', 1, 1, SALE_LIMITS.maxPerUserLimit);
/** Copies of the same token sent at once (a double, triple… click). */
const CLICKS = envInt('CLICKS', 5, 2, 50);
/** Other tokens of the same buyer, sent in the same instant. */
const EXTRA_TOKENS = envInt('EXTRA_TOKENS', 2, 0, 20);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const SCENARIO = 'duplicate_clicks';
const BUCKET_SECONDS = declareTimeline(shapeSeconds(SHAPE) + 40);
const LATENCY = buyerLatencyBounds(config, SCENARIO);

/** Buyers whose replays of one token did not all answer alike (a replay must return the same order). */
const replayMismatch = new Counter('replay_mismatch');
/** Buyers holding more distinct orders than the per-user limit. */
const limitExceeded = new Counter('limit_exceeded');

export const options: Options = {
  // A buyer makes 3 + EXTRA_TOKENS calls and one batch: 0.5 s sizes the VU pool with room.
  scenarios: { [SCENARIO]: spikeScenario(SHAPE, 0.5, { tags: { strategy: STRATEGY } }) },
  // One batch carries every click of a buyer: let them all go in parallel.
  batch: CLICKS + EXTRA_TOKENS,
  batchPerHost: CLICKS + EXTRA_TOKENS,
  ...runOptions(config),
  thresholds: scenarioThresholds(config, LATENCY, {
    replay_mismatch: ['count==0'],
    limit_exceeded: ['count==0'],
    purchase_accepted: [`count<=${STOCK}`],
  }),
};

const api = new Api(config.baseUrl, config.httpTimeout);

export const { setup, teardown } = oneSaleRun(config, {
  scenario: 'duplicate-clicks',
  about: `up to ${SHAPE.peakRate} buyers/s × (${CLICKS} clicks + ${EXTRA_TOKENS} tokens)`,
  opensInSeconds: 0,
  sale: { priceCents: 1999, stock: STOCK, perUserLimit: PER_USER_LIMIT, strategy: STRATEGY },
  announce: (sale) =>
    `sale ${sale.id} (${STRATEGY}, stock ${STOCK}, limit ${PER_USER_LIMIT}): about ${plannedArrivals(SHAPE)} buyers`,
});

/** The same answer: same outcome, and the same order number when accepted. */
function sameAnswer(a: PurchaseOutcome, b: PurchaseOutcome): boolean {
  if (a.kind !== b.kind || a.status !== b.status) return false;
  return a.kind !== 'accepted' || (b.kind === 'accepted' && a.orderNo === b.orderNo);
}

/** Sends every purchase of `tokens` at once, then again those that `Resends` says to send again. */
function clickAll(
  session: Session,
  saleId: string,
  tokens: string[],
): { outcomes: PurchaseOutcome[]; durations: number[] } {
  const outcomes: PurchaseOutcome[] = [];
  const durations: number[] = [];
  const resends = new Resends();
  let pending = tokens.map((_, i) => i);
  while (pending.length > 0) {
    const responses = http.batch(
      pending.map((i) => api.purchaseRequest(session, saleId, tokens[i] as string)),
    ) as RefinedResponse<'text'>[];
    const again: number[] = [];
    let wait = 0.05;
    responses.forEach((res, k) => {
      const i = pending[k] as number;
      const outcome = classifyPurchase(res, STRATEGY);
      recordTimeline(res.timings.duration);
      const resendAfter = resends.waitBeforeResend(outcome);
      if (resendAfter !== undefined) {
        (outcome.kind === 'not_started' ? purchaseEarly : purchaseRetriedLater).add(1);
        wait = Math.max(wait, resendAfter);
        again.push(i);
        return;
      }
      if (outcome.kind === 'retry_later') purchaseGaveUp.add(1);
      outcomes[i] = resends.final(outcome);
      durations[i] = res.timings.duration;
    });
    pending = again;
    if (pending.length > 0) sleep(wait);
  }
  return { outcomes, durations };
}

export default function (data: OneSaleRun): void {
  startTimelineAt(data.loadStartMs);
  const buyer = prepareBuyer(api, data.saleId, `k6-dup-${data.runId}-${exec.scenario.iterationInTest}`);
  if (!buyer) return;
  const tokens = [buyer.token];
  for (let i = 0; i < EXTRA_TOKENS; i++) {
    const extra = api.submitToken(buyer.session, data.saleId);
    if (!extra.ok) {
      recordUnexpected('token', extra);
      return;
    }
    tokens.push(extra.value.token);
  }
  // CLICKS copies of the first token, then one request per extra token.
  const sent = [...Array.from({ length: CLICKS }, () => tokens[0] as string), ...tokens.slice(1)];

  const { outcomes, durations } = clickAll(buyer.session, data.saleId, sent);
  const tokenOfOrder = new Map<string, string>();
  let sharedOrderNo = false;
  outcomes.forEach((outcome, i) => {
    const duration = durations[i] ?? 0;
    if (outcome.kind !== 'accepted') {
      recordPurchase(outcome, duration);
      return;
    }
    const token = sent[i] as string;
    const owner = tokenOfOrder.get(outcome.orderNo);
    if (owner === undefined) {
      tokenOfOrder.set(outcome.orderNo, token);
      recordPurchase(outcome, duration);
    } else if (owner === token) {
      // A replay that returned the order its token already bought: not a second sale.
      purchaseReplayed.add(1);
      purchaseDuration.add(duration);
    } else {
      sharedOrderNo = true; // two different tokens answered with one order number
      recordPurchase(outcome, duration);
    }
  });

  const clicks = outcomes.slice(0, CLICKS);
  const first = clicks[0];
  const replaysAgree = first !== undefined && clicks.every((outcome) => sameAnswer(first, outcome));
  if (!replaysAgree) {
    replayMismatch.add(1);
    const answers = clicks.map((o) => (o.kind === 'accepted' ? o.orderNo : `${o.status} ${o.kind}`));
    warnSome('replay', `replays of one token answered differently: ${answers.join(', ')}`);
  }
  const orders = [...tokenOfOrder.keys()];
  const withinLimit = orders.length <= PER_USER_LIMIT;
  if (!withinLimit) limitExceeded.add(1);

  check(outcomes, {
    'replays of one token get the same answer': () => replaysAgree,
    [`at most ${PER_USER_LIMIT} order(s) per buyer`]: () => withinLimit,
    'different tokens never share an order number': () => !sharedOrderNo,
  });

  // The buyer sees each of its orders (QUEUED until the worker writes it, then PENDING_PAYMENT).
  for (const orderNo of orders) {
    const order = api.order(buyer.session.token, orderNo);
    if (!order.ok) {
      recordUnexpected('get_order', order);
      continue;
    }
    check(order.value, {
      'an accepted order is the buyer’s and is QUEUED or PENDING_PAYMENT': (o) =>
        o.userId === buyer.session.userId && (o.status === 'QUEUED' || o.status === 'PENDING_PAYMENT'),
    });
  }
}

export const handleSummary = summaryHandler({
  name: 'duplicate-clicks',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load:
    `spike of ${SHAPE.peakRate} buyers/s (ramp ${SHAPE.rampUpS} s, hold ${SHAPE.holdS} s, down ${SHAPE.rampDownS} s; ` +
    `about ${plannedArrivals(SHAPE)} buyers), each ${CLICKS} clicks of one token + ${EXTRA_TOKENS} other tokens at once`,
  details: (data) => [
    `Sale: ${STRATEGY}, stock ${STOCK}, per-user limit ${PER_USER_LIMIT}; ${count(data, 'purchase_accepted')} distinct orders`,
    `Replays answered with the same order: ${count(data, 'purchase_replayed')}; ` +
      `buyers whose replays disagreed: ${count(data, 'replay_mismatch')}; ` +
      `buyers above the limit: ${count(data, 'limit_exceeded')}`,
    auditLine(data),
  ],
});
