// What the scenarios' options and setups have in common: run timeouts, the thresholds of the two
// verdicts (lib/verdict.ts), the ones that only keep per-endpoint and per-status numbers for the report,
// the instant-burst executor, and a sale opening at a given moment.
import type { Options, PerVUIterationsScenario } from 'k6/options';
import type { CreateSaleRequest, Sale } from '../../libs/contract/src/sale.ts';
import { type Endpoint, ENDPOINTS, must } from './api.ts';
import type { Admin } from './audit.ts';
import type { CommonConfig } from './config.ts';
import { SETUP_THRESHOLD } from './metrics.ts';
import { fmt, stat } from './summary-data.ts';
import { boundGates, gaveUpBound, type LatencyBound } from './verdict.ts';

/** Setup and teardown time (teardown waits for each audited sale's queue to drain), and the report's stats. */
export function runOptions(
  config: CommonConfig,
  salesAudited = 1,
): Pick<Options, 'setupTimeout' | 'teardownTimeout' | 'summaryTrendStats'> {
  return {
    setupTimeout: '60s',
    teardownTimeout: `${salesAudited * config.quietTimeoutSeconds + 60}s`,
    // `count`: the timeline's requests per bucket and the per-endpoint request counts.
    summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
  };
}

/**
 * The Correctness thresholds, always built, so a correctness failure always makes k6 exit 99: setup
 * incomplete, an answer outside the contract, an oversell or any audit violation, a failed check.
 */
export function correctnessThresholds(): Record<string, string[]> {
  return {
    ...SETUP_THRESHOLD,
    purchase_unexpected: ['count==0'],
    request_unexpected: ['count==0'],
    oversold_units: ['value==0'],
    audit_violations: ['count==0'],
    checks: ['rate==1'],
  };
}

/**
 * The Latency thresholds: `stat<bound` when latency gates (the default), else `stat>=0`, which never
 * fails but keeps the sub-metric in the summary so the report can still judge and show it.
 */
export function latencyThresholds(config: CommonConfig, bounds: LatencyBound[]): Record<string, string[]> {
  const all: Record<string, string[]> = {};
  for (const bound of bounds) {
    const expression = config.latencyGates && boundGates(bound) ? `${bound.stat}<${bound.below}` : `${bound.stat}>=0`;
    all[bound.metric] = [...(all[bound.metric] ?? []), expression];
  }
  return all;
}

/** The p95 bound of a metric, for a scenario's latency bounds. */
export function p95Bound(config: CommonConfig, label: string, metric: string): LatencyBound {
  return { label, metric, stat: 'p(95)', below: config.p95Ms };
}

/**
 * The latency bounds of a scenario whose buyers sign in, take a token and buy: the purchase's p95, every
 * request's p95, and no buyer left giving up.
 */
export function buyerLatencyBounds(config: CommonConfig, scenario: string): LatencyBound[] {
  return [
    p95Bound(config, 'purchase p95', 'purchase_duration'),
    p95Bound(config, 'every request p95', `http_req_duration{scenario:${scenario}}`),
    gaveUpBound(),
  ];
}

/**
 * Every threshold of a scenario: correctness, the scenario's own (`extra`, e.g. how many purchases may
 * be accepted), latency, and the report's.
 */
export function scenarioThresholds(
  config: CommonConfig,
  latency: LatencyBound[],
  extra: Record<string, string[]> = {},
): Record<string, string[]> {
  return { ...correctnessThresholds(), ...extra, ...latencyThresholds(config, latency), ...reportThresholds() };
}

/** Statuses the report counts answers for (`0`: no answer). */
const REPORTED_STATUSES = [
  '0',
  '200',
  '201',
  '202',
  '400',
  '401',
  '403',
  '404',
  '409',
  '410',
  '413',
  '429',
  '500',
  '503',
];

/**
 * Thresholds that never fail: k6 keeps a sub-metric in its end-of-test data only when a threshold names
 * it, and the report wants latency per endpoint and answers per status.
 */
export function reportThresholds(endpoints: readonly Endpoint[] = ENDPOINTS): Record<string, string[]> {
  const all: Record<string, string[]> = {};
  for (const endpoint of endpoints) all[`http_req_duration{endpoint:${endpoint}}`] = ['max>=0'];
  for (const status of REPORTED_STATUSES) all[`http_reqs{status:${status}}`] = ['count>=0'];
  return all;
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

/** A sale window that opens `startDelaySeconds` from now and lasts `hours`. */
export function opensIn(startDelaySeconds: number, hours = 1): { startsAt: string; endsAt: string } {
  const startsAt = new Date(Date.now() + startDelaySeconds * 1000);
  return { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + hours * 3600_000).toISOString() };
}

/** A load-test sale (hidden from the storefront) that opens `startDelaySeconds` from now, or setup stops. */
export function createSaleOpeningLater(
  admin: Admin,
  startDelaySeconds: number,
  sale: Omit<CreateSaleRequest, 'startsAt' | 'endsAt'>,
  what: string,
): Sale {
  return must(
    admin.api.createSale(admin.token, { purpose: 'load-test', ...sale, ...opensIn(startDelaySeconds) }),
    what,
  );
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
