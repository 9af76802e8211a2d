// Flash-sale burst: USERS buyers arrive in the same instant for STOCK units.
//
//   setup     admin signs in, creates one sale (STRATEGY, default redis-lua) opening START_DELAY s ahead
//   each VU   = one buyer: guest sign-in, submit token, sleep until the opening instant, buy once
//   teardown  waits for the order queue to drain, then audits the sale
//
// Passes when: no unexpected answer (only 202/201, 410 SOLD_OUT, 409 LIMIT_REACHED), accepted ==
// min(STOCK, USERS), the audit finds no oversell, no duplicate, no lost reservation and balanced books,
// and p(95) latency stays under P95_MS.
//
//   k6 run load-tests/flash-sale-burst.ts -e BASE_URL=http://localhost:3000 -e USERS=2000 -e STOCK=500
import exec from 'k6/execution';
import type { Options } from 'k6/options';
import { Api, must } from './lib/api.ts';
import { auditChecks, signInAdmin, waitForQuiet } from './lib/audit.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt, envStrategy, runId } from './lib/config.ts';
import { buy, prepareBuyer, sleepUntil } from './lib/flows.ts';
import { completeSetup, SETUP_THRESHOLD } from './lib/metrics.ts';
import { fmt, stat, summaryHandler } from './lib/summary.ts';

const config = commonConfig();
const USERS = envInt('USERS', 2000);
const STOCK = envInt('STOCK', 500, 1, SALE_LIMITS.maxStock);
/** Seconds between setup and the opening: every buyer must have signed in and got a token by then. */
const START_DELAY = envInt('START_DELAY', 10, 1, 100);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const EXPECTED_ACCEPTED = Math.min(STOCK, USERS);
const SCENARIO = 'burst';

export const options: Options = {
  scenarios: {
    [SCENARIO]: {
      executor: 'per-vu-iterations',
      vus: USERS,
      iterations: 1,
      maxDuration: `${START_DELAY + 120}s`,
      tags: { strategy: STRATEGY },
    },
  },
  setupTimeout: '60s',
  teardownTimeout: `${config.quietTimeoutSeconds + 60}s`,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  thresholds: {
    ...SETUP_THRESHOLD,
    purchase_unexpected: ['count==0'],
    request_unexpected: ['count==0'],
    purchase_accepted: [`count==${EXPECTED_ACCEPTED}`],
    [`http_req_duration{scenario:${SCENARIO}}`]: [`p(95)<${config.p95Ms}`],
    purchase_duration: [`p(95)<${config.p95Ms}`],
    oversold_units: ['value==0'],
    audit_violations: ['count==0'],
    checks: ['rate==1'],
  },
};

interface SetupData {
  saleId: string;
  startsAtMs: number;
  runId: string;
}

const api = new Api(config.baseUrl, config.httpTimeout);

export function setup(): SetupData {
  const admin = signInAdmin(config);
  const id = runId();
  const startsAt = new Date(Date.now() + START_DELAY * 1000);
  const sale = must(
    admin.api.createSale(admin.token, {
      name: `k6 burst ${id}`,
      description: `k6 flash-sale-burst: ${USERS} buyers, ${STOCK} units`,
      priceCents: 4999,
      stock: STOCK,
      perUserLimit: 1,
      startsAt: startsAt.toISOString(),
      endsAt: new Date(startsAt.getTime() + 3600_000).toISOString(),
      strategy: STRATEGY,
    }),
    `Creating the ${STRATEGY} sale`,
  );
  console.log(`sale ${sale.id} (${STRATEGY}, stock ${STOCK}) opens at ${sale.startsAt} for ${USERS} buyers`);
  return completeSetup({ saleId: sale.id, startsAtMs: Date.parse(sale.startsAt), runId: id });
}

export default function (data: SetupData): void {
  const buyer = prepareBuyer(api, data.saleId, `k6-burst-${data.runId}-${exec.vu.idInTest}`);
  if (!buyer) return;
  sleepUntil(data.startsAtMs);
  buy(api, buyer, data.saleId, STRATEGY);
}

export function teardown(data: SetupData): void {
  const admin = signInAdmin(config);
  auditChecks(waitForQuiet(admin, data.saleId), {
    label: STRATEGY,
    tags: { strategy: STRATEGY },
    held: EXPECTED_ACCEPTED,
  });
}

export const handleSummary = summaryHandler({
  name: 'flash-sale-burst',
  scenarios: [SCENARIO],
  config,
  details: (data) => [
    `Sale: ${STRATEGY}, stock ${STOCK}, ${USERS} buyers → expected accepted ${EXPECTED_ACCEPTED}`,
    `Audit: held ${fmt(stat(data, 'held_units', 'value'))}, oversold ${fmt(stat(data, 'oversold_units', 'value'))}, ` +
      `duplicate orders ${fmt(stat(data, 'duplicate_orders', 'value'))}, ` +
      `lost reservations ${fmt(stat(data, 'lost_reservations', 'value'))}, ` +
      `ok ${stat(data, 'audit_ok', 'value') === 1 ? 'yes' : 'NO'}`,
  ],
});
