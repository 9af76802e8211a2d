// Soak: a steady stream of buyers (constant arrival rate, RATE per second for DURATION) spread over
// SALES live sales with a large stock. Each iteration is a new guest: sign in, token, buy; then the
// buyer pays (PAY_RATIO of the accepted orders) or cancels (CANCEL_RATIO) once the order is written,
// and leaves the rest pending. Teardown waits for every queue to drain and audits every sale.
//
// Passes when no call broke the contract, every pay answered 200 PAID and every cancel 200 CANCELLED,
// every sale's audit is clean (returned units are back, books balance) and p(95) stays under P95_MS.
//
//   k6 run load-tests/soak.ts -e BASE_URL=http://localhost:3000 -e RATE=50 -e DURATION=5m -e SALES=3
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { Api, must } from './lib/api.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { commonConfig, envDuration, envInt, envNumber, envStrategy } from './lib/config.ts';
import { buy, prepareBuyer, waitUntilWritten } from './lib/flows.ts';
import { recordUnexpected } from './lib/metrics.ts';
import { auditSales, type RunData, setupRun } from './lib/run.ts';
import { buyerLatencyBounds, runOptions, scenarioThresholds } from './lib/scenario.ts';
import { DEFAULT_SOAK } from './lib/shapes.ts';
import { count, fmt, stat, summaryHandler } from './lib/summary.ts';
import { declareTimeline, startTimelineAt } from './lib/timeline.ts';

const config = commonConfig();
/** New buyers per second. */
const RATE = envInt('RATE', DEFAULT_SOAK.rate, 1, 100_000);
const DURATION = envDuration('DURATION', DEFAULT_SOAK.duration);
const SALES = envInt('SALES', DEFAULT_SOAK.sales, 1, 50);
/** Units of each sale: large, so the soak measures steady selling, not a sell-out. */
const STOCK = envInt('STOCK', 1_000_000, 1, SALE_LIMITS.maxStock);
const PAY_RATIO = envNumber('PAY_RATIO', DEFAULT_SOAK.payRatio, 0, 1);
const CANCEL_RATIO = envNumber('CANCEL_RATIO', DEFAULT_SOAK.cancelRatio, 0, 1 - PAY_RATIO);
/** How long a buyer waits for its order's row before paying or cancelling it. */
const ORDER_WAIT = envInt('ORDER_WAIT', 15, 1, 600);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const SCENARIO = 'soak';
const BUCKET_SECONDS = declareTimeline(DURATION.seconds + ORDER_WAIT + 40);
const LATENCY = buyerLatencyBounds(config, SCENARIO);

const ordersPaid = new Counter('orders_paid');
const ordersCancelled = new Counter('orders_cancelled');

export const options: Options = {
  scenarios: {
    [SCENARIO]: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION.text,
      preAllocatedVUs: Math.max(10, RATE * 2),
      maxVUs: Math.max(50, RATE * 20),
      gracefulStop: `${ORDER_WAIT + 30}s`,
      tags: { strategy: STRATEGY },
    },
  },
  ...runOptions(config, SALES),
  thresholds: scenarioThresholds(config, LATENCY),
};

interface SetupData extends RunData {
  saleIds: string[];
}

const api = new Api(config.baseUrl, config.httpTimeout);

export function setup(): SetupData {
  return setupRun(config, (admin, id) => {
    const endsAt = new Date(Date.now() + (DURATION.seconds + 3600) * 1000).toISOString();
    const saleIds: string[] = [];
    for (let i = 1; i <= SALES; i++) {
      const sale = must(
        admin.api.createSale(admin.token, {
          name: `k6 soak ${id} #${i}`,
          description: `k6 soak: ${RATE}/s for ${DURATION.text} over ${SALES} sales`,
          priceCents: 999 + i,
          stock: STOCK,
          perUserLimit: 1,
          endsAt, // starts now (the default)
          strategy: STRATEGY,
          purpose: 'load-test',
          // Longer than the run: pending orders stay pending instead of expiring mid-soak.
          paymentTimeoutSeconds: Math.min(86_400, DURATION.seconds + 3600),
        }),
        `Creating ${STRATEGY} sale #${i}`,
      );
      saleIds.push(sale.id);
    }
    console.log(
      `sales ${saleIds.join(', ')} (${STRATEGY}, stock ${STOCK} each): ${RATE} buyers/s for ${DURATION.text}`,
    );
    return { saleIds };
  });
}

export default function (data: SetupData): void {
  startTimelineAt(data.loadStartMs);
  const iteration = exec.scenario.iterationInTest;
  const saleId = data.saleIds[iteration % data.saleIds.length] as string;
  const buyer = prepareBuyer(api, saleId, `k6-soak-${data.runId}-${iteration}`);
  if (!buyer) return;
  const outcome = buy(api, buyer, saleId, STRATEGY);
  if (outcome.kind !== 'accepted') return;

  const dice = Math.random();
  if (dice >= PAY_RATIO + CANCEL_RATIO) return; // left pending
  const order = waitUntilWritten(api, buyer.session, outcome.orderNo, ORDER_WAIT);
  if (!order) return;
  if (order.status !== 'PENDING_PAYMENT') {
    recordUnexpected('get_order', {
      status: 200,
      code: order.status,
      message: `order ${order.orderNo} is ${order.status}, expected PENDING_PAYMENT`,
    });
    return;
  }
  if (dice < PAY_RATIO) {
    const paid = api.pay(buyer.session, order.orderNo);
    if (paid.ok && paid.value.status === 'PAID') ordersPaid.add(1);
    else recordUnexpected('pay', paid.ok ? { status: 200, code: paid.value.status, message: 'not PAID' } : paid);
  } else {
    const cancelled = api.cancel(buyer.session, order.orderNo);
    if (cancelled.ok && cancelled.value.status === 'CANCELLED') ordersCancelled.add(1);
    else {
      recordUnexpected(
        'cancel',
        cancelled.ok ? { status: 200, code: cancelled.value.status, message: 'not CANCELLED' } : cancelled,
      );
    }
  }
}

export function teardown(data: SetupData): void {
  auditSales(
    config,
    data.saleIds.map((saleId, i) => [saleId, { label: `${STRATEGY} sale #${i + 1}`, tags: { strategy: STRATEGY } }]),
  );
}

/** Over every audited sale: gauges keep min and max, so min(audit_ok) = 1 means all were clean. */
function auditLine(data: K6SummaryData): string {
  const audited = stat(data, 'audit_ok', 'min') !== undefined;
  if (!audited) return 'Audit: no sale was audited';
  const allOk = stat(data, 'audit_ok', 'min') === 1 && count(data, 'audit_violations') === 0;
  return (
    `Audit of ${SALES} sale(s): ${allOk ? 'every sale clean' : 'NOT CLEAN (see the teardown log lines)'}; ` +
    `max oversold ${fmt(stat(data, 'oversold_units', 'max'))}, ` +
    `max duplicate orders ${fmt(stat(data, 'duplicate_orders', 'max'))}, ` +
    `max lost reservations ${fmt(stat(data, 'lost_reservations', 'max'))}`
  );
}

export const handleSummary = summaryHandler({
  name: 'soak',
  config,
  latencyBounds: LATENCY,
  timelineBucketSeconds: BUCKET_SECONDS,
  load: `constant arrival rate: ${RATE} new buyers/s for ${DURATION.text} over ${SALES} ${STRATEGY} sale(s)`,
  details: (data) => {
    const accepted = count(data, 'purchase_accepted');
    const paid = count(data, 'orders_paid');
    const cancelled = count(data, 'orders_cancelled');
    return [
      `${SALES} ${STRATEGY} sale(s), stock ${STOCK} each`,
      `Orders: ${accepted} accepted, ${paid} paid, ${cancelled} cancelled, ${accepted - paid - cancelled} left pending`,
      auditLine(data),
    ];
  },
});
