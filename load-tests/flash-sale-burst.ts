// Flash-sale burst: buyers arrive the way they do at a real flash sale — a spike of PEAK_RATE new
// buyers per second that ramps up (RAMP_UP s), holds (HOLD s) and fades (RAMP_DOWN s) — for STOCK units.
//
//   setup     admin signs in, creates one load-test sale (STRATEGY, default redis-lua), open at once
//   each      arrival = one buyer: guest sign-in, submit token, buy once
//   teardown  waits for the order queue to drain, then audits the sale
//
// Correctness: only 202/201, 410 SOLD_OUT, 409 LIMIT_REACHED answers; at most STOCK accepted; the audit
// finds no oversell, no duplicate, no lost reservation and balanced books. Latency: p95 under P95_MS.
// (Every buyer in the same millisecond instead: stampede.ts.)
//
//   k6 run load-tests/flash-sale-burst.ts -e BASE_URL=http://localhost:3000
import exec from 'k6/execution';
import type { Options } from 'k6/options';
import { Api } from './lib/api.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt, envSpike, envStrategy } from './lib/config.ts';
import { buy, prepareBuyer } from './lib/flows.ts';
import { type OneSaleRun, oneSaleRun } from './lib/run.ts';
import { auditLine, buyerLatencyBounds, runOptions, scenarioThresholds } from './lib/scenario.ts';
import { DEFAULT_SHAPES, DEFAULT_STOCK, plannedArrivals, shapeSeconds, spikeScenario } from './lib/shapes.ts';
import { count, summaryHandler } from './lib/summary.ts';
import { declareTimeline, startTimelineAt } from './lib/timeline.ts';

const config = commonConfig();
const SHAPE = envSpike(DEFAULT_SHAPES.burst);
const STOCK = envInt('STOCK', DEFAULT_STOCK.burst, 1, SALE_LIMITS.maxStock);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const SCENARIO = 'burst';
const BUCKET_SECONDS = declareTimeline(shapeSeconds(SHAPE) + 40);
const LATENCY = buyerLatencyBounds(config, SCENARIO);

export const options: Options = {
  // A buyer's three calls take a few tens of ms on a healthy stack: 0.3 s sizes the VU pool with room.
  scenarios: { [SCENARIO]: spikeScenario(SHAPE, 0.3, { tags: { strategy: STRATEGY } }) },
  ...runOptions(config),
  thresholds: scenarioThresholds(config, LATENCY, { purchase_accepted: [`count<=${STOCK}`] }),
};

const api = new Api(config.baseUrl, config.httpTimeout);

export const { setup, teardown } = oneSaleRun(config, {
  scenario: 'flash-sale-burst',
  about: `up to ${SHAPE.peakRate} buyers/s, ${STOCK} units`,
  opensInSeconds: 0,
  sale: { priceCents: 4999, stock: STOCK, perUserLimit: 1, strategy: STRATEGY },
  announce: (sale) => `sale ${sale.id} (${STRATEGY}, stock ${STOCK}): about ${plannedArrivals(SHAPE)} buyers arrive`,
});

export default function (data: OneSaleRun): void {
  startTimelineAt(data.loadStartMs);
  const buyer = prepareBuyer(api, data.saleId, `k6-burst-${data.runId}-${exec.scenario.iterationInTest}`);
  if (!buyer) return;
  buy(api, buyer, data.saleId, STRATEGY);
}

export const handleSummary = summaryHandler({
  name: 'flash-sale-burst',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load:
    `spike of ${SHAPE.peakRate} buyers/s (ramp ${SHAPE.rampUpS} s, hold ${SHAPE.holdS} s, down ${SHAPE.rampDownS} s; ` +
    `about ${plannedArrivals(SHAPE)} buyers) on one ${STRATEGY} sale of ${STOCK} units`,
  details: (data) => [
    `Sale: ${STRATEGY}, stock ${STOCK}; ${count(data, 'purchase_accepted')} accepted, ` +
      `${count(data, 'purchase_accepted') >= STOCK ? 'sold out' : 'not sold out'}`,
    auditLine(data),
  ],
});
