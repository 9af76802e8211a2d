// What the scenarios' options and setups have in common: run timeouts, the thresholds that say "the
// contract held and nothing was oversold", the burst executor, and a sale that opens a little later.
import type { Options, PerVUIterationsScenario } from 'k6/options';
import type { CreateSaleRequest, Sale } from '../../libs/contract/src/sale.ts';
import { must } from './api.ts';
import type { Admin } from './audit.ts';
import type { CommonConfig } from './config.ts';
import { SETUP_THRESHOLD } from './metrics.ts';
import { fmt, stat } from './summary.ts';

/** Setup and teardown time (teardown waits for each audited sale's queue to drain), and the report's stats. */
export function runOptions(
  config: CommonConfig,
  salesAudited = 1,
): Pick<Options, 'setupTimeout' | 'teardownTimeout' | 'summaryTrendStats'> {
  return {
    setupTimeout: '60s',
    teardownTimeout: `${salesAudited * config.quietTimeoutSeconds + 60}s`,
    summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  };
}

/**
 * The thresholds every sale-driving scenario fails on: setup incomplete, an answer outside docs/api.md, an
 * oversell or any audit violation, a failed check, and (with `scenario`) p95 above P95_MS.
 */
export function contractThresholds(config: CommonConfig, scenario?: string): Record<string, string[]> {
  return {
    ...SETUP_THRESHOLD,
    purchase_unexpected: ['count==0'],
    request_unexpected: ['count==0'],
    ...(scenario === undefined
      ? {}
      : {
          [`http_req_duration{scenario:${scenario}}`]: [`p(95)<${config.p95Ms}`],
          purchase_duration: [`p(95)<${config.p95Ms}`],
        }),
    oversold_units: ['value==0'],
    audit_violations: ['count==0'],
    checks: ['rate==1'],
  };
}

/** One VU per buyer and one iteration each: every buyer its own connection, all there at the opening. */
export function burstScenario(
  users: number,
  startDelaySeconds: number,
  extra: Partial<PerVUIterationsScenario> = {},
): PerVUIterationsScenario {
  return {
    executor: 'per-vu-iterations',
    vus: users,
    iterations: 1,
    maxDuration: `${startDelaySeconds + 120}s`,
    ...extra,
  };
}

/** A sale window that opens `startDelaySeconds` from now and lasts an hour. */
export function opensIn(startDelaySeconds: number): { startsAt: string; endsAt: string } {
  const startsAt = new Date(Date.now() + startDelaySeconds * 1000);
  return { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 3600_000).toISOString() };
}

/** Creates a sale that opens `startDelaySeconds` from now, or stops setup saying what failed. */
export function createSaleOpeningLater(
  admin: Admin,
  startDelaySeconds: number,
  sale: Omit<CreateSaleRequest, 'startsAt' | 'endsAt'>,
  what: string,
): Sale {
  return must(admin.api.createSale(admin.token, { ...sale, ...opensIn(startDelaySeconds) }), what);
}

/** The report's audit line for one sale. */
export function auditLine(data: K6SummaryData, detailed = true): string {
  const counters = detailed
    ? `duplicate orders ${fmt(stat(data, 'duplicate_orders', 'value'))}, ` +
      `lost reservations ${fmt(stat(data, 'lost_reservations', 'value'))}, `
    : '';
  return (
    `Audit: held ${fmt(stat(data, 'held_units', 'value'))}, oversold ${fmt(stat(data, 'oversold_units', 'value'))}, ` +
    `${counters}ok ${stat(data, 'audit_ok', 'value') === 1 ? 'yes' : 'NO'}`
  );
}
