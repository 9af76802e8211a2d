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
import { Api } from './lib/api.ts';
import { auditChecks, signInAdmin, waitForQuiet } from './lib/audit.ts';
import { SALE_LIMITS } from '../libs/contract/src/sale.ts';
import { commonConfig, envInt, envStrategy, runId } from './lib/config.ts';
import { buy, prepareBuyer, sleepUntil } from './lib/flows.ts';
import { completeSetup } from './lib/metrics.ts';
import { auditLine, burstScenario, contractThresholds, createSaleOpeningLater, runOptions } from './lib/scenario.ts';
import { summaryHandler } from './lib/summary.ts';

const config = commonConfig();
const USERS = envInt('USERS', 2000);
const STOCK = envInt('STOCK', 500, 1, SALE_LIMITS.maxStock);
/** Seconds between setup and the opening: every buyer must have signed in and got a token by then. */
const START_DELAY = envInt('START_DELAY', 10, 1, 100);
const STRATEGY = envStrategy('STRATEGY', 'redis-lua');
const EXPECTED_ACCEPTED = Math.min(STOCK, USERS);
const SCENARIO = 'burst';

export const options: Options = {
  scenarios: { [SCENARIO]: burstScenario(USERS, START_DELAY, { tags: { strategy: STRATEGY } }) },
  ...runOptions(config),
  thresholds: {
    ...contractThresholds(config, SCENARIO),
    purchase_accepted: [`count==${EXPECTED_ACCEPTED}`],
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
  const sale = createSaleOpeningLater(
    admin,
    START_DELAY,
    {
      name: `k6 burst ${id}`,
      description: `k6 flash-sale-burst: ${USERS} buyers, ${STOCK} units`,
      priceCents: 4999,
      stock: STOCK,
      perUserLimit: 1,
      strategy: STRATEGY,
    },
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
    auditLine(data),
  ],
});
